package entity

// Property is one named custom property.
type Property struct {
	Name  string
	Value Value
}

// Entity is a stored or incoming entity. Props hold only custom properties, in the order they
// were last written (PartitionKey, RowKey and Timestamp are never among them).
type Entity struct {
	PartitionKey string
	RowKey       string
	// Timestamp is the server-kept DateTime in ticks; it also determines the ETag.
	Timestamp int64
	Props     []Property
}

// Get returns the named property, including the system properties PartitionKey, RowKey
// (String) and Timestamp (DateTime).
func (e *Entity) Get(name string) (Value, bool) {
	switch name {
	case "PartitionKey":
		return StringValue(e.PartitionKey), true
	case "RowKey":
		return StringValue(e.RowKey), true
	case "Timestamp":
		return DateTimeValue(e.Timestamp), true
	}
	for i := range e.Props {
		if e.Props[i].Name == name {
			return e.Props[i].Value, true
		}
	}
	return Value{}, false
}

// Merge overwrites e's properties with those of patch (keeping e's order for properties that
// exist and appending new ones), as Merge Entity and Insert Or Merge do.
func (e *Entity) Merge(patch []Property) {
	for _, p := range patch {
		found := false
		for i := range e.Props {
			if e.Props[i].Name == p.Name {
				e.Props[i].Value = p.Value
				found = true
				break
			}
		}
		if !found {
			e.Props = append(e.Props, p)
		}
	}
}
