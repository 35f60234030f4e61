package serviceprops

// Limits from Azure's documentation of Set Table Service Properties.
const (
	MaxCorsRules       = 5
	MaxRetentionDays   = 365
	maxOrigins         = 64
	maxDefinedHeaders  = 64
	maxPrefixedHeaders = 2
	// maxCorsChars bounds the text of all CORS rules together (Azure: 2 KiB, tags excluded).
	maxCorsChars = 2048
	// MaxBodyBytes bounds a Set Table Service Properties body.
	MaxBodyBytes = 64 << 10
	// defaultVersion is the analytics version Azure reports for a new account.
	defaultVersion = "1.0"
)

// allowedMethods are the verbs a CORS rule may list.
var allowedMethods = [...]string{"DELETE", "GET", "HEAD", "MERGE", "POST", "OPTIONS", "PUT", "PATCH"}

// RetentionPolicy says how long analytics data is kept. Days is meaningful only when
// Enabled (1..365).
type RetentionPolicy struct {
	Enabled bool
	Days    int
}

// Logging is the analytics logging setting.
type Logging struct {
	Version             string
	Delete, Read, Write bool
	Retention           RetentionPolicy
}

// Metrics is an hour or minute metrics setting. IncludeAPIs is meaningful only when Enabled.
type Metrics struct {
	Version     string
	Enabled     bool
	IncludeAPIs bool
	Retention   RetentionPolicy
}

// CorsRule is one CORS rule. List fields hold the comma-separated items as given, trimmed.
type CorsRule struct {
	AllowedOrigins  []string
	AllowedMethods  []string
	AllowedHeaders  []string
	ExposedHeaders  []string
	MaxAgeInSeconds int
}

// Properties is the complete StorageServiceProperties of an account.
type Properties struct {
	Logging       Logging
	HourMetrics   Metrics
	MinuteMetrics Metrics
	Cors          []CorsRule
	// Blob holds the Blob service's additions (blob.go).
	Blob BlobSettings
}

// Update is a parsed Set Table Service Properties body: nil (or HasCors false) means the
// element was omitted and keeps its previous value.
type Update struct {
	Logging       *Logging
	HourMetrics   *Metrics
	MinuteMetrics *Metrics
	HasCors       bool
	Cors          []CorsRule
	Blob          BlobSettings
}

// Default returns the properties of a new account: everything disabled, no CORS rules.
func Default() Properties {
	return Properties{
		Logging:       Logging{Version: defaultVersion},
		HourMetrics:   Metrics{Version: defaultVersion},
		MinuteMetrics: Metrics{Version: defaultVersion},
	}
}

// Apply returns p with the elements present in u replaced.
func (p Properties) Apply(u *Update) Properties {
	if u.Logging != nil {
		p.Logging = *u.Logging
	}
	if u.HourMetrics != nil {
		p.HourMetrics = *u.HourMetrics
	}
	if u.MinuteMetrics != nil {
		p.MinuteMetrics = *u.MinuteMetrics
	}
	if u.HasCors {
		p.Cors = append([]CorsRule(nil), u.Cors...)
	}
	p.Blob = p.Blob.apply(u.Blob)
	return p
}

// Decode reads a stored document (rendered by AppendXML); nil means never set, i.e. Default.
func Decode(doc []byte) (Properties, error) {
	p := Default()
	if doc == nil {
		return p, nil
	}
	u, err := ParseBlob(doc) // a stored document has Blob elements only if the Blob service wrote it
	if err != nil {
		return Properties{}, err
	}
	return p.Apply(u), nil
}
