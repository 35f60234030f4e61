package stress

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
)

// KeyGen makes PartitionKeys the way a design would: the guide's append-only and
// prepend-only patterns, random GUIDs, a hash into N buckets, one fixed key, or a list.
type KeyGen struct {
	kind    string
	fixed   string
	buckets int
	list    []string
	seq     atomic.Int64
}

// ParseKeyGen reads fixed[:VALUE], sequential, reverse, guid, hashed:N or list:A,B,...
func ParseKeyGen(spec string) (*KeyGen, error) {
	kind, arg, _ := strings.Cut(spec, ":")
	g := &KeyGen{kind: kind}
	switch kind {
	case "fixed":
		g.fixed = arg
		if g.fixed == "" {
			g.fixed = "stress"
		}
	case "sequential", "reverse", "guid":
		if arg != "" {
			return nil, fmt.Errorf("pk %q: %s takes no argument", spec, kind)
		}
	case "hashed":
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 || n > 1_000_000 {
			return nil, fmt.Errorf("pk %q: want hashed:N with 1 <= N <= 1000000", spec)
		}
		g.buckets = n
	case "list":
		for v := range strings.SplitSeq(arg, ",") {
			if v != "" {
				g.list = append(g.list, v)
			}
		}
		if len(g.list) == 0 {
			return nil, fmt.Errorf("pk %q: want list:A,B,C", spec)
		}
	default:
		return nil, fmt.Errorf("pk %q: want fixed[:VALUE], sequential, reverse, guid, hashed:N or list:A,B,C", spec)
	}
	return g, nil
}

// Kind names the generator.
func (g *KeyGen) Kind() string { return g.kind }

// Next returns the PartitionKey for a new write.
func (g *KeyGen) Next(rnd *rand.Rand) string {
	switch g.kind {
	case "sequential":
		return fmt.Sprintf("%012d", g.seq.Add(1))
	case "reverse":
		return fmt.Sprintf("%012d", 999_999_999_999-g.seq.Add(1))
	case "guid":
		return guid(rnd)
	case "hashed":
		h := fnv.New32a()
		var b [8]byte
		n := uint64(g.seq.Add(1))
		for i := range b {
			b[i] = byte(n >> (8 * i))
		}
		h.Write(b[:])
		width := len(strconv.Itoa(g.buckets - 1))
		return fmt.Sprintf("%0*d", width, h.Sum32()%uint32(g.buckets))
	case "list":
		return g.list[rnd.IntN(len(g.list))]
	}
	return g.fixed
}

func guid(rnd *rand.Rand) string {
	a, b := rnd.Uint64(), rnd.Uint64()
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", a>>32, a>>16&0xffff, a&0xfff, 0x8000|b>>48&0x3fff, b&0xffffffffffff)
}
