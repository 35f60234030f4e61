package server

// operationNames label each operation in metrics (the "operation" label); index 0 is a
// request refused before it was routed.
var operationNames = [...]string{
	0:                      "Unknown",
	opQueryTables:          "QueryTables",
	opCreateTable:          "CreateTable",
	opGetTable:             "GetTable",
	opDeleteTable:          "DeleteTable",
	opQueryEntities:        "QueryEntities",
	opGetEntity:            "GetEntity",
	opInsertEntity:         "InsertEntity",
	opPutEntity:            "PutEntity",
	opMergeEntity:          "MergeEntity",
	opDeleteEntity:         "DeleteEntity",
	opBatch:                "Batch",
	opGetACL:               "GetTableACL",
	opSetACL:               "SetTableACL",
	opGetServiceProperties: "GetServiceProperties",
	opSetServiceProperties: "SetServiceProperties",
	opGetServiceStats:      "GetServiceStats",
	opPreflight:            "Preflight",
}

// DropCaches forgets the cached service properties, for when the store's contents are
// replaced underneath the server (a snapshot restore or a reset). The caller keeps requests
// out meanwhile; bumping every generation also refuses any fill begun before.
func (s *Server) DropCaches() {
	pc := &s.props
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.init()
	for a := range pc.m {
		pc.gen[a]++
	}
	clear(pc.m)
}
