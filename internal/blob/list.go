package blob

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

// ListRequest is List Blobs' query.
type ListRequest struct {
	Prefix, Delimiter, Marker string
	Max                       int
	Snapshots, Uncommitted    bool
}

// ListItem is a blob (or snapshot) or, in a hierarchical listing, a BlobPrefix.
type ListItem struct {
	Prefix string
	Blob   *Blob
}

// MaxListResults is the largest page.
const MaxListResults = 5000

// List lists a container's blobs in name order (UTF-8 byte order; a blob's snapshots, oldest
// first, before it). Max counts blobs and prefixes alike. The marker is opaque: the key of
// the next item.
func (s *Service) List(ctx context.Context, account, container string, q ListRequest) (items []ListItem, next string, err error) {
	c, err := s.GetContainer(ctx, account, container)
	if err != nil {
		return nil, "", err
	}
	if q.Max <= 0 || q.Max > MaxListResults {
		q.Max = MaxListResults
	}
	base := keys.BlobPrefix(c.ID, "")
	start := keys.BlobPrefix(c.ID, q.Prefix)
	end := keys.PrefixEnd(start)
	if q.Marker != "" {
		m, err := base64.RawURLEncoding.DecodeString(q.Marker)
		if err != nil {
			return nil, "", azerr.New(azerr.InvalidQueryParameterValue)
		}
		if k := append(bytes.Clone(base), m...); bytes.Compare(k, start) > 0 {
			start = k
		}
	}
	snap, err := s.st.Snapshot(ctx)
	if err != nil {
		return nil, "", err
	}
	defer snap.Close()
	for {
		restart := false
		err = snap.Scan(ctx, start, end, func(k, v []byte) (bool, error) {
			if len(items) == q.Max {
				next = base64.RawURLEncoding.EncodeToString(k[len(base):])
				return false, nil
			}
			name, snapTicks, err := keys.DecodeBlob(c.ID, k)
			if err != nil {
				return false, err
			}
			if q.Delimiter != "" {
				if i := strings.Index(name[len(q.Prefix):], q.Delimiter); i >= 0 {
					p := name[:len(q.Prefix)+i+len(q.Delimiter)]
					items = append(items, ListItem{Prefix: p})
					start = keys.PrefixEnd(keys.BlobPrefix(c.ID, p))
					restart = true
					return false, nil
				}
			}
			if snapTicks != 0 && !q.Snapshots {
				return true, nil
			}
			b, err := decodeBlob(v)
			if err != nil {
				return false, err
			}
			b.Name, b.Snapshot = name, snapTicks
			items = append(items, ListItem{Blob: b})
			return true, nil
		})
		if err != nil || !restart {
			break
		}
	}
	if err != nil {
		return nil, "", err
	}
	if q.Uncommitted {
		items, err = s.addUncommitted(ctx, snap, c.ID, q, items, next)
	}
	return items, next, err
}

// addUncommitted merges blobs that have only staged blocks (include=uncommittedblobs) into
// a page, as Content-Length 0 block blobs.
func (s *Service) addUncommitted(ctx context.Context, snap store.Snapshot, cid uint64, q ListRequest, items []ListItem, next string) ([]ListItem, error) {
	have := map[string]bool{}
	for _, it := range items {
		if it.Blob != nil {
			have[it.Blob.Name] = true
		}
	}
	lo := keys.BlobBlockPrefix(cid, q.Prefix, true)
	hi := keys.PrefixEnd(lo)
	if q.Marker != "" {
		// Names before the page's marker belong to earlier pages (List has checked it).
		m, _ := base64.RawURLEncoding.DecodeString(q.Marker)
		from, _, _ := bytes.Cut(m, []byte{0})
		if k := keys.BlobBlockPrefix(cid, string(from), true); bytes.Compare(k, lo) > 0 {
			lo = k
		}
	}
	var names []string
	err := snap.Scan(ctx, lo, hi, func(k, v []byte) (bool, error) {
		name, _, err := keys.DecodeBlobBlock(cid, k)
		if err != nil {
			return false, err
		}
		if next != "" {
			if m, _ := base64.RawURLEncoding.DecodeString(next); name >= string(m) {
				return false, nil
			}
		}
		if q.Delimiter != "" && strings.Contains(name[len(q.Prefix):], q.Delimiter) {
			return true, nil
		}
		if !have[name] && (len(names) == 0 || names[len(names)-1] != name) {
			names = append(names, name)
		}
		return true, nil
	})
	if err != nil {
		return items, err
	}
	// Which of them have no committed blob: looked up after the scan, not inside it (a
	// snapshot of a SQL engine is one connection, busy while a scan's rows are open).
	kept := names[:0]
	for _, name := range names {
		_, err := snap.Lookup(keys.Blob(cid, name, 0))
		switch {
		case errors.Is(err, store.ErrNotFound):
			kept = append(kept, name)
		case err != nil:
			return items, err
		}
	}
	names = kept
	if len(names) == 0 {
		return items, nil
	}
	out := make([]ListItem, 0, len(items)+len(names))
	i := 0
	for _, it := range items {
		n := it.Prefix
		if it.Blob != nil {
			n = it.Blob.Name
		}
		for i < len(names) && names[i] < n {
			out = append(out, ListItem{Blob: &Blob{Name: names[i], Type: BlockBlob}})
			i++
		}
		out = append(out, it)
	}
	for ; i < len(names); i++ {
		out = append(out, ListItem{Blob: &Blob{Name: names[i], Type: BlockBlob}})
	}
	return out, nil
}
