package serviceprops

import "strconv"

// The Blob service's additions to StorageServiceProperties (blob.md §14). They are stored
// and returned; honouring them (soft delete, a static website) is not emulated.

// DeleteRetention is DeleteRetentionPolicy (blob soft delete).
type DeleteRetention struct {
	Enabled              bool
	Days                 int
	AllowPermanentDelete bool
}

// StaticWebsite is the StaticWebsite element.
type StaticWebsite struct {
	Enabled                                                  bool
	IndexDocument, ErrorDocument404Path, DefaultIndexDocPath string
}

// BlobSettings holds the Blob additions; a nil field was never set (and is not rendered, so
// the Table and Queue documents are unchanged).
type BlobSettings struct {
	DefaultServiceVersion *string
	DeleteRetention       *DeleteRetention
	StaticWebsite         *StaticWebsite
}

func (b BlobSettings) apply(u BlobSettings) BlobSettings {
	if u.DefaultServiceVersion != nil {
		b.DefaultServiceVersion = u.DefaultServiceVersion
	}
	if u.DeleteRetention != nil {
		b.DeleteRetention = u.DeleteRetention
	}
	if u.StaticWebsite != nil {
		b.StaticWebsite = u.StaticWebsite
	}
	return b
}

// parseBlobElement parses one of the Blob additions into u; handled is false for other
// elements.
func parseBlobElement(r *reader, name string, u *BlobSettings, seen once) (handled bool, err error) {
	switch name {
	case "DefaultServiceVersion", "DeleteRetentionPolicy", "StaticWebsite":
		if err := seen.see("StorageServiceProperties", name); err != nil {
			return true, err
		}
	}
	switch name {
	case "DefaultServiceVersion":
		v, err := r.text()
		u.DefaultServiceVersion = &v
		return true, err
	case "DeleteRetentionPolicy":
		d := &DeleteRetention{}
		seen := once{}
		err := r.children(func(n string) error {
			if err := seen.see(name, n); err != nil {
				return err
			}
			var err error
			switch n {
			case "Enabled":
				d.Enabled, err = r.boolText(n)
			case "Days":
				d.Days, err = r.intText(n, MaxRetentionDays)
				if err == nil && d.Days < 1 {
					err = invalidValue("DeleteRetentionPolicy Days %d is outside 1..%d", d.Days, MaxRetentionDays)
				}
			case "AllowPermanentDelete":
				d.AllowPermanentDelete, err = r.boolText(n)
			default:
				err = r.skip()
			}
			return err
		})
		if err == nil && d.Enabled && d.Days == 0 {
			err = invalidDoc("DeleteRetentionPolicy is enabled without Days")
		}
		if !d.Enabled {
			d.Days = 0
		}
		u.DeleteRetention = d
		return true, err
	case "StaticWebsite":
		w := &StaticWebsite{}
		seen := once{}
		err := r.children(func(n string) error {
			if err := seen.see(name, n); err != nil {
				return err
			}
			var err error
			switch n {
			case "Enabled":
				w.Enabled, err = r.boolText(n)
			case "IndexDocument":
				w.IndexDocument, err = r.text()
			case "ErrorDocument404Path":
				w.ErrorDocument404Path, err = r.text()
			case "DefaultIndexDocumentPath":
				w.DefaultIndexDocPath, err = r.text()
			default:
				err = r.skip()
			}
			return err
		})
		u.StaticWebsite = w
		return true, err
	}
	return false, nil
}

func (b *BlobSettings) appendXML(dst []byte) []byte {
	if d := b.DeleteRetention; d != nil {
		dst = append(dst, "<DeleteRetentionPolicy>"...)
		dst = appendBool(dst, "Enabled", d.Enabled)
		if d.Enabled {
			dst = appendElem(dst, "Days", strconv.Itoa(d.Days))
		}
		dst = appendBool(dst, "AllowPermanentDelete", d.AllowPermanentDelete)
		dst = append(dst, "</DeleteRetentionPolicy>"...)
	}
	if w := b.StaticWebsite; w != nil {
		dst = append(dst, "<StaticWebsite>"...)
		dst = appendBool(dst, "Enabled", w.Enabled)
		for _, kv := range [][2]string{{"IndexDocument", w.IndexDocument}, {"ErrorDocument404Path", w.ErrorDocument404Path}, {"DefaultIndexDocumentPath", w.DefaultIndexDocPath}} {
			if kv[1] != "" {
				dst = appendElem(dst, kv[0], kv[1])
			}
		}
		dst = append(dst, "</StaticWebsite>"...)
	}
	if v := b.DefaultServiceVersion; v != nil && *v != "" {
		dst = appendElem(dst, "DefaultServiceVersion", *v)
	}
	return dst
}
