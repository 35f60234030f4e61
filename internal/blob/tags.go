package blob

import (
	"bytes"
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
	"github.com/tablo/tablo/internal/tagquery"
)

// Tags are a blob's index tags, sorted by key (Azure returns them in key order).
type Tags [][2]string

// Limits of blob index tags.
const (
	MaxTags        = 10
	maxTagKeyLen   = 128
	maxTagValueLen = 256
)

// Get returns the value of key.
func (t Tags) Get(key string) (string, bool) {
	for _, kv := range t {
		if kv[0] == key {
			return kv[1], true
		}
	}
	return "", false
}

// NewTags checks tags as Azure does (count, then each tag's name, lengths and characters,
// then duplicates) and returns them sorted.
func NewTags(kvs [][2]string) (Tags, error) {
	if len(kvs) > MaxTags {
		return nil, azerr.New(azerr.TagsTooLarge)
	}
	for _, kv := range kvs {
		if kv[0] == "" {
			return nil, azerr.New(azerr.EmptyTagName)
		}
		if utf8.RuneCountInString(kv[0]) > maxTagKeyLen || utf8.RuneCountInString(kv[1]) > maxTagValueLen {
			return nil, azerr.New(azerr.TagsTooLarge)
		}
		if !validTagText(kv[0]) || !validTagText(kv[1]) {
			return nil, azerr.New(azerr.InvalidTag)
		}
	}
	t := Tags(slices.Clone(kvs))
	slices.SortStableFunc(t, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	for i := 1; i < len(t); i++ {
		if t[i][0] == t[i-1][0] {
			return nil, azerr.New(azerr.DuplicateTagNames)
		}
	}
	if len(t) == 0 {
		return nil, nil
	}
	return t, nil
}

// validTagText: letters, digits, space and + - . / : = _ only.
func validTagText(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte(" +-./:=_", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// checkTags applies x-ms-if-tags to a blob's tags (412 ConditionNotMet when false).
func (c *Cond) checkTags(t Tags) error {
	if c.IfTags != nil && !c.IfTags.Match(t.Get) {
		return azerr.New(azerr.ConditionNotMet)
	}
	return nil
}

// SetTags replaces a blob's (or snapshot's) tags. Like Azure, it leaves the ETag and
// Last-Modified alone: tags are not the blob's content.
func (s *Service) SetTags(ctx context.Context, r Ref, tags Tags, cond Cond) error {
	_, err := s.update(ctx, r, func(_ store.Txn, _ *Container, old *Blob, now int64) (*Blob, error) {
		if old == nil {
			return nil, azerr.New(azerr.BlobNotFound)
		}
		if r.Snapshot == 0 {
			if err := old.Lease.checkWrite(now, cond.LeaseID, false); err != nil {
				return nil, err
			}
		}
		if err := cond.check(true, old.ETag(), old.Modified, false, false); err != nil {
			return nil, err
		}
		if err := cond.checkTags(old.Tags); err != nil {
			return nil, err
		}
		old.Tags = tags
		return old, nil
	})
	return err
}

// Found is one blob of a Find Blobs by Tags answer, with the tags the expression names.
type Found struct {
	Container, Name string
	Tags            Tags
}

// FindByTags lists the base blobs whose tags match e, in container then name order, in
// one container or (container "") in every container of the account. It reads every blob
// record of the containers in range (there is no secondary index), skipping without
// decoding the records that have no tags when e compares at least one tag. The marker is
// opaque: the container and name of the next blob.
func (s *Service) FindByTags(ctx context.Context, account, container string, e *tagquery.Expr, marker string, max int) (out []Found, next string, err error) {
	if max <= 0 || max > MaxListResults {
		max = MaxListResults
	}
	var mc, mn string
	if marker != "" {
		m, err := base64.RawURLEncoding.DecodeString(marker)
		if err != nil || !bytes.Contains(m, []byte{0}) {
			return nil, "", azerr.New(azerr.InvalidQueryParameterValue)
		}
		mc, mn, _ = strings.Cut(string(m), "\x00")
	}
	var cs []*Container
	if container != "" {
		c, err := s.GetContainer(ctx, account, container)
		if err != nil {
			return nil, "", err
		}
		cs = []*Container{c}
	} else {
		for from := ""; ; {
			page, more, err := s.ListContainers(ctx, account, "", from, MaxListResults)
			if err != nil {
				return nil, "", err
			}
			cs = append(cs, page...)
			if more == "" {
				break
			}
			from = more
		}
	}
	needTags := len(e.Keys()) > 0
	for _, c := range cs {
		if c.Name < mc {
			continue
		}
		start := keys.BlobPrefix(c.ID, "")
		end := keys.PrefixEnd(start)
		if c.Name == mc {
			start = keys.Blob(c.ID, mn, 0)
		}
		err := s.st.Scan(ctx, start, end, func(k, v []byte) (bool, error) {
			name, snap, err := keys.DecodeBlob(c.ID, k)
			if err != nil || snap != 0 {
				return err == nil, err
			}
			if needTags && !recordHasTags(v) {
				return true, nil
			}
			b, err := decodeBlob(v)
			if err != nil {
				return false, err
			}
			get := func(key string) (string, bool) {
				if key == tagquery.ContainerKey {
					return c.Name, true
				}
				return b.Tags.Get(key)
			}
			if !e.Match(get) {
				return true, nil
			}
			if len(out) == max {
				next = base64.RawURLEncoding.EncodeToString([]byte(c.Name + "\x00" + name))
				return false, nil
			}
			f := Found{Container: c.Name, Name: name}
			for _, key := range e.Keys() {
				if v, ok := b.Tags.Get(key); ok {
					f.Tags = append(f.Tags, [2]string{key, v})
				}
			}
			out = append(out, f)
			return true, nil
		})
		if err != nil || next != "" {
			return out, next, err
		}
	}
	return out, "", nil
}

// recordHasTags looks for the tags field in a record's JSON header without decoding it.
func recordHasTags(v []byte) bool {
	return bytes.Contains(v[:min(len(v), recordHeaderEnd(v))], []byte(`"tg":`))
}
