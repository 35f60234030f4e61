package auth

// Blob service operations, numbered apart from the Table and Queue ones so that each
// service's list grows on its own. Service-level operations share GetServiceProperties,
// SetServiceProperties and GetServiceStats.
const (
	ListContainers Operation = 200 + iota
	CreateContainer
	DeleteContainer
	GetContainerProperties // properties and metadata
	SetContainerMetadata
	GetContainerACL
	SetContainerACL
	LeaseContainer
	ListBlobs
	ReadBlob   // Get Blob, properties, metadata, block list, page ranges
	WriteBlob  // Put Blob / Block / Block List / Page, Set Properties / Metadata / Tier, Snapshot, Copy destination
	AppendBlob // Append Block
	DeleteBlob
	LeaseBlob
	GetAccountInfo
	GetBlobTags
	SetBlobTags
	FindBlobs            // Find Blobs by Tags in the account
	FindBlobsInContainer // Find Blobs by Tags in a container
	blobOpsEnd
)

var blobOperationNames = [...]string{
	"ListContainers", "CreateContainer", "DeleteContainer", "GetContainerProperties",
	"SetContainerMetadata", "GetContainerACL", "SetContainerACL", "LeaseContainer", "ListBlobs",
	"ReadBlob", "WriteBlob", "AppendBlob", "DeleteBlob", "LeaseBlob", "GetAccountInfo",
	"GetBlobTags", "SetBlobTags", "FindBlobs", "FindBlobsInContainer",
}

// blobSASRules follows blob.md §13.3 (service SAS) and §13.4 (account SAS). A write that
// creates a blob is allowed with c or w on an account SAS; a service SAS needs w.
var blobSASRules = [...]sasRule{
	{serviceDenied: true, resource: 's', account: "l"},  // ListContainers
	{serviceDenied: true, resource: 'c', account: "cw"}, // CreateContainer
	{serviceDenied: true, resource: 'c', account: "d"},  // DeleteContainer
	{service: "r", resource: 'c', account: "r"},         // GetContainerProperties
	{service: "w", resource: 'c', account: "w"},         // SetContainerMetadata
	{serviceDenied: true},                               // GetContainerACL
	{serviceDenied: true},                               // SetContainerACL
	{service: "w", resource: 'c', account: "w"},         // LeaseContainer
	{service: "l", resource: 'c', account: "l"},         // ListBlobs
	{service: "r", resource: 'o', account: "r"},         // ReadBlob
	{service: "w", resource: 'o', account: "cw"},        // WriteBlob
	{service: "w", resource: 'o', account: "aw"},        // AppendBlob
	{service: "d", resource: 'o', account: "d"},         // DeleteBlob
	{service: "w", resource: 'o', account: "w"},         // LeaseBlob
	{resource: 's'}, // GetAccountInfo
	{service: "t", resource: 'o', account: "t"},        // GetBlobTags
	{service: "t", resource: 'o', account: "t"},        // SetBlobTags
	{serviceDenied: true, resource: 's', account: "f"}, // FindBlobs
	{service: "f", resource: 'c', account: "f"},        // FindBlobsInContainer
}

// ruleOf returns an operation's SAS rule.
func ruleOf(op Operation) (sasRule, bool) {
	if op >= ListContainers && op < blobOpsEnd {
		return blobSASRules[op-ListContainers], true
	}
	if op <= 0 || int(op) >= len(sasRules) {
		return sasRule{}, false
	}
	return sasRules[op], true
}
