package blob

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

// Options configure a Service.
type Options struct {
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// SweepInterval is how often the background sweep looks for unreferenced extents
	// (default 1 minute; negative: no background sweep, tests call Sweep).
	SweepInterval time.Duration
	// BlockExpiry is how long an uncommitted block lives (default 7 days, as Azure).
	BlockExpiry time.Duration
	// SharedGrace is how long an unreferenced extent stays before the sweep deletes it when
	// the store is shared by several front ends (gc.go; default DefaultSharedGrace). On an
	// engine of one process it is not used: there the holds cover everything.
	SharedGrace time.Duration
}

// DefaultSharedGrace is Options.SharedGrace's default.
const DefaultSharedGrace = 10 * time.Minute

// Service is the Blob service's rules on a store. Safe for concurrent use.
type Service struct {
	st  store.Store
	ext store.Extents
	log *slog.Logger
	clk clock
	gc  collector
	// containers and blobs cache decoded records (recordcache.go); blobs only for reads
	// (Get), whose callers do not modify what they get in place.
	containers *recordCache[Container]
	blobs      *recordCache[Blob]
	stop       chan struct{}
	done       sync.WaitGroup
	close      sync.Once
}

// New returns a Service and starts its background sweep.
func New(st store.Store, o Options) *Service {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.SweepInterval == 0 {
		o.SweepInterval = time.Minute
	}
	if o.BlockExpiry == 0 {
		o.BlockExpiry = 7 * 24 * time.Hour
	}
	s := &Service{st: st, ext: st.Extents(), log: o.Logger, stop: make(chan struct{}), containers: newContainerCache(), blobs: newBlobCache()}
	s.clk.now = o.Now
	var grace time.Duration
	if store.TraitsOf(st).Shared {
		grace = o.SharedGrace
		if grace <= 0 {
			grace = DefaultSharedGrace
		}
	}
	s.gc.init(o.BlockExpiry, grace)
	if o.SweepInterval > 0 {
		s.done.Add(1)
		go s.sweepLoop(o.SweepInterval)
	}
	return s
}

// Close stops the background sweep.
func (s *Service) Close() {
	s.close.Do(func() { close(s.stop) })
	s.done.Wait()
}

func containerLock(account, name string) store.Lock {
	return store.Lock{Name: "bc/" + account + "/" + name}
}

// blobLock names a blob by its container's name, not its id, so that a writer can take it
// without reading the container first; update holds the container's lock (shared) with it,
// so the name stands for one container throughout.
func blobLock(account, container, name string) store.Lock {
	return store.Lock{Name: "bb/" + account + "/" + container + "/" + name}
}

// getContainer reads a container's record with get (the store's or a transaction's).
func (s *Service) getContainer(get func([]byte) ([]byte, error), account, name string) (*Container, error) {
	k := keys.BlobCatalog(account, name)
	v, err := get(k)
	if errors.Is(err, store.ErrNotFound) {
		return nil, azerr.New(azerr.ContainerNotFound)
	}
	if err != nil {
		return nil, err
	}
	return s.containers.get(k, v)
}

// CreateContainer creates a container (409 ContainerAlreadyExists if it exists).
func (s *Service) CreateContainer(ctx context.Context, account, name, public string, meta Meta) (*Container, error) {
	if err := ValidContainerName(name); err != nil {
		return nil, err
	}
	if err := ValidatePublic(public); err != nil {
		return nil, err
	}
	if err := ValidateMeta(meta); err != nil {
		return nil, err
	}
	var c *Container
	err := s.st.Update(ctx, []store.Lock{containerLock(account, name), {Name: "bc-counter"}}, func(tx store.Txn) error {
		if _, err := tx.Get(keys.BlobCatalog(account, name)); err == nil {
			return azerr.New(azerr.ContainerAlreadyExists)
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		var id uint64
		if v, err := tx.Get(keys.BlobContainerCounter()); err == nil && len(v) == 8 {
			id = binary.BigEndian.Uint64(v)
		} else if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		id++
		if err := tx.Set(keys.BlobContainerCounter(), binary.BigEndian.AppendUint64(nil, id)); err != nil {
			return err
		}
		t := s.clk.tick()
		c = &Container{ID: id, Name: name, Created: t, Modified: t, Meta: meta, Public: public}
		return tx.Set(keys.BlobCatalog(account, name), encodeRecord(c, nil))
	})
	return c, err
}

// ValidatePublic checks x-ms-blob-public-access.
func ValidatePublic(p string) error {
	switch p {
	case "", "blob", "container":
		return nil
	}
	return azerr.New(azerr.InvalidHeaderValue)
}

// GetContainer returns a container's record.
func (s *Service) GetContainer(ctx context.Context, account, name string) (*Container, error) {
	return s.getContainer(func(k []byte) ([]byte, error) { return s.st.Get(ctx, k) }, account, name)
}

// Now is the service's clock in ticks (lease states are computed against it).
func (s *Service) Now() int64 { return s.clk.now().UnixNano() / 100 }

// updateContainer runs fn on a container's record under its lock and stores it.
func (s *Service) updateContainer(ctx context.Context, account, name string, fn func(c *Container, now int64) error) (*Container, error) {
	var c *Container
	err := s.st.Update(ctx, []store.Lock{containerLock(account, name)}, func(tx store.Txn) error {
		var err error
		c, err = s.getContainer(tx.Get, account, name)
		if err != nil {
			return err
		}
		if err := fn(c, s.Now()); err != nil {
			return err
		}
		return tx.Set(keys.BlobCatalog(account, name), encodeRecord(c, nil))
	})
	return c, err
}

// DeleteContainer deletes a container and, with one range delete, everything in it; the
// sweep reclaims the bytes of its blobs in the background.
func (s *Service) DeleteContainer(ctx context.Context, account, name string, cond Cond) error {
	err := s.st.Update(ctx, []store.Lock{containerLock(account, name)}, func(tx store.Txn) error {
		c, err := s.getContainer(tx.Get, account, name)
		if err != nil {
			return err
		}
		if err := c.Lease.checkWrite(s.Now(), cond.LeaseID, true); err != nil {
			return err
		}
		if err := cond.check(true, c.ETag(), c.Modified, false, false); err != nil {
			return err
		}
		if err := tx.Delete(keys.BlobCatalog(account, name)); err != nil {
			return err
		}
		p := keys.BlobContainerData(c.ID)
		return tx.DeleteRange(p, keys.PrefixEnd(p))
	})
	if err == nil {
		s.gc.poke()
	}
	return err
}

// DeleteAccount deletes every container of account with everything in it, and the
// account's Blob service settings, in one write; the sweep reclaims the blobs' extents in
// the background. The caller keeps every other call out meanwhile.
func (s *Service) DeleteAccount(ctx context.Context, account string) error {
	var ids []uint64
	cat := keys.BlobCatalog(account, "")
	err := s.st.Scan(ctx, cat, keys.PrefixEnd(cat), func(_, v []byte) (bool, error) {
		c := &Container{}
		if _, err := decodeRecord(v, c); err != nil {
			return false, err
		}
		ids = append(ids, c.ID)
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("list containers of %s: %w", account, err)
	}
	err = s.st.Update(ctx, nil, func(tx store.Txn) error {
		for _, id := range ids {
			p := keys.BlobContainerData(id)
			if err := tx.DeleteRange(p, keys.PrefixEnd(p)); err != nil {
				return err
			}
		}
		if err := tx.DeleteRange(cat, keys.PrefixEnd(cat)); err != nil {
			return err
		}
		set := keys.BlobSetting(account, "")
		return tx.DeleteRange(set, keys.PrefixEnd(set))
	})
	if err == nil && len(ids) > 0 {
		s.gc.poke()
	}
	return err
}

// SetContainerMetadata replaces a container's metadata.
func (s *Service) SetContainerMetadata(ctx context.Context, account, name string, meta Meta, cond Cond) (*Container, error) {
	if err := ValidateMeta(meta); err != nil {
		return nil, err
	}
	return s.updateContainer(ctx, account, name, func(c *Container, now int64) error {
		if err := c.Lease.checkWrite(now, cond.LeaseID, true); err != nil && cond.LeaseID != "" {
			return err
		}
		if err := cond.check(true, c.ETag(), c.Modified, false, false); err != nil {
			return err
		}
		c.Meta, c.Modified = meta, s.clk.tick()
		return nil
	})
}

// SetContainerACL sets the public access level and the stored access policies.
func (s *Service) SetContainerACL(ctx context.Context, account, name, public string, ids []auth.SignedIdentifier, cond Cond) (*Container, error) {
	if err := ValidatePublic(public); err != nil {
		return nil, err
	}
	return s.updateContainer(ctx, account, name, func(c *Container, now int64) error {
		if err := c.Lease.checkWrite(now, cond.LeaseID, true); err != nil && cond.LeaseID != "" {
			return err
		}
		if err := cond.check(true, c.ETag(), c.Modified, false, false); err != nil {
			return err
		}
		c.Public, c.ACL, c.Modified = public, ids, s.clk.tick()
		return nil
	})
}

// LeaseContainer runs a lease action on a container. Lease calls leave the ETag alone.
func (s *Service) LeaseContainer(ctx context.Context, account, name string, r LeaseRequest, cond Cond) (*Container, LeaseResult, error) {
	var res LeaseResult
	c, err := s.updateContainer(ctx, account, name, func(c *Container, now int64) error {
		if err := cond.check(true, c.ETag(), c.Modified, false, false); err != nil {
			return err
		}
		var err error
		res, err = c.Lease.apply(now, r)
		return err
	})
	return c, res, err
}

// ListContainers lists an account's containers by name from marker (inclusive).
func (s *Service) ListContainers(ctx context.Context, account, prefix, marker string, max int) (out []*Container, next string, err error) {
	base := keys.BlobCatalog(account, "")
	start := keys.BlobCatalog(account, prefix)
	if marker > prefix {
		start = keys.BlobCatalog(account, marker)
	}
	end := keys.PrefixEnd(keys.BlobCatalog(account, prefix))
	err = s.st.Scan(ctx, start, end, func(k, v []byte) (bool, error) {
		if len(out) == max {
			next = string(k[len(base):])
			return false, nil
		}
		c := &Container{}
		if _, err := decodeRecord(v, c); err != nil {
			return false, err
		}
		out = append(out, c)
		return true, nil
	})
	return out, next, err
}

// AccountSetting implements edge.Settings for the Blob service's documents.
func (s *Service) AccountSetting(ctx context.Context, account, name string) ([]byte, error) {
	v, err := s.st.Get(ctx, keys.BlobSetting(account, name))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return v, err
}

// UpdateAccountSetting implements edge.Settings.
func (s *Service) UpdateAccountSetting(ctx context.Context, account, name string, fn func(old []byte) ([]byte, error)) error {
	k := keys.BlobSetting(account, name)
	return s.st.Update(ctx, []store.Lock{{Name: "bs/" + account + "/" + name}}, func(tx store.Txn) error {
		old, err := tx.Get(k)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		nv, err := fn(old)
		if err != nil {
			return err
		}
		if bytes.Equal(nv, old) {
			return nil
		}
		return tx.Set(k, nv)
	})
}
