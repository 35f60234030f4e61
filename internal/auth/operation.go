package auth

import "fmt"

// Operation is a Table service operation, as far as authorization cares.
type Operation int

// Every Table service operation.
const (
	QueryTables Operation = iota + 1
	CreateTable
	DeleteTable
	GetTable // GET /Tables('t'): Query Tables for one table
	QueryEntities
	GetEntity
	InsertEntity
	UpdateEntity
	MergeEntity
	InsertOrReplace
	InsertOrMerge
	DeleteEntity
	GetACL
	SetACL
	GetServiceProperties
	SetServiceProperties
	GetServiceStats
	Batch // the outer $batch request; each sub-operation is authorized on its own
	Preflight

	// Queue service operations (service-level ones share GetServiceProperties,
	// SetServiceProperties and GetServiceStats, whose rules do not depend on the service).
	ListQueues
	CreateQueue
	DeleteQueue
	GetQueueMetadata
	SetQueueMetadata
	GetQueueACL
	SetQueueACL
	PutMessage
	GetMessages
	PeekMessages
	UpdateMessage
	DeleteMessage
	ClearMessages
)

var operationNames = [...]string{
	QueryTables:          "QueryTables",
	CreateTable:          "CreateTable",
	DeleteTable:          "DeleteTable",
	GetTable:             "GetTable",
	QueryEntities:        "QueryEntities",
	GetEntity:            "GetEntity",
	InsertEntity:         "InsertEntity",
	UpdateEntity:         "UpdateEntity",
	MergeEntity:          "MergeEntity",
	InsertOrReplace:      "InsertOrReplace",
	InsertOrMerge:        "InsertOrMerge",
	DeleteEntity:         "DeleteEntity",
	GetACL:               "GetACL",
	SetACL:               "SetACL",
	GetServiceProperties: "GetServiceProperties",
	SetServiceProperties: "SetServiceProperties",
	GetServiceStats:      "GetServiceStats",
	Batch:                "Batch",
	Preflight:            "Preflight",
	ListQueues:           "ListQueues",
	CreateQueue:          "CreateQueue",
	DeleteQueue:          "DeleteQueue",
	GetQueueMetadata:     "GetQueueMetadata",
	SetQueueMetadata:     "SetQueueMetadata",
	GetQueueACL:          "GetQueueACL",
	SetQueueACL:          "SetQueueACL",
	PutMessage:           "PutMessage",
	GetMessages:          "GetMessages",
	PeekMessages:         "PeekMessages",
	UpdateMessage:        "UpdateMessage",
	DeleteMessage:        "DeleteMessage",
	ClearMessages:        "ClearMessages",
}

func (op Operation) String() string {
	if op > 0 && int(op) < len(operationNames) {
		return operationNames[op]
	}
	if op >= ListContainers && op < blobOpsEnd {
		return blobOperationNames[op-ListContainers]
	}
	return fmt.Sprintf("Operation(%d)", int(op))
}

// sasRule says what a SAS needs for one operation.
type sasRule struct {
	// service: letters a service SAS must hold, all of them. serviceDenied: the operation is
	// never allowed with a service SAS (table-level and service-level operations).
	service       string
	serviceDenied bool
	// resource: the account SAS resource type (s, c, o) needed; 0 = never allowed with an
	// account SAS. account: letters of which the account SAS must hold at least one ("" = none
	// needed at this level).
	resource byte
	account  string
}

// sasRules follows auth.md §7.3 (service SAS) and §8 (account SAS), i.e. Azure's documentation
// where Azurite disagrees:
//   - Insert Or Replace/Merge need a AND u with a service SAS (Azurite: u only), a OR u with
//     an account SAS.
//   - Query Entities needs resource type o (Azurite checks c).
//   - Query Tables needs resource type c.
var sasRules = [...]sasRule{
	QueryTables:          {serviceDenied: true, resource: 'c', account: "l"},
	CreateTable:          {serviceDenied: true, resource: 'c', account: "acw"},
	DeleteTable:          {serviceDenied: true, resource: 'c', account: "d"},
	GetTable:             {serviceDenied: true, resource: 'c', account: "lr"},
	QueryEntities:        {service: "r", resource: 'o', account: "r"},
	GetEntity:            {service: "r", resource: 'o', account: "r"},
	InsertEntity:         {service: "a", resource: 'o', account: "a"},
	UpdateEntity:         {service: "u", resource: 'o', account: "u"},
	MergeEntity:          {service: "u", resource: 'o', account: "u"},
	InsertOrReplace:      {service: "au", resource: 'o', account: "au"},
	InsertOrMerge:        {service: "au", resource: 'o', account: "au"},
	DeleteEntity:         {service: "d", resource: 'o', account: "d"},
	GetACL:               {serviceDenied: true},
	SetACL:               {serviceDenied: true},
	GetServiceProperties: {serviceDenied: true, resource: 's', account: "r"},
	SetServiceProperties: {serviceDenied: true, resource: 's', account: "w"},
	GetServiceStats:      {serviceDenied: true, resource: 's', account: "r"},
	Batch:                {resource: 'o'},
	Preflight:            {},

	// Queue: queue.md §10.1 (service SAS) and §10.2 (account SAS).
	ListQueues:       {serviceDenied: true, resource: 's', account: "l"},
	CreateQueue:      {serviceDenied: true, resource: 'c', account: "acw"},
	DeleteQueue:      {serviceDenied: true, resource: 'c', account: "d"},
	GetQueueMetadata: {service: "r", resource: 'c', account: "r"},
	SetQueueMetadata: {serviceDenied: true, resource: 'c', account: "w"},
	GetQueueACL:      {serviceDenied: true},
	SetQueueACL:      {serviceDenied: true},
	PutMessage:       {service: "a", resource: 'o', account: "a"},
	GetMessages:      {service: "p", resource: 'o', account: "p"},
	PeekMessages:     {service: "r", resource: 'o', account: "r"},
	UpdateMessage:    {service: "u", resource: 'o', account: "u"},
	DeleteMessage:    {service: "p", resource: 'o', account: "p"},
	ClearMessages:    {serviceDenied: true, resource: 'o', account: "d"},
}
