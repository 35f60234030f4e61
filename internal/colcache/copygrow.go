//go:build !linux

package colcache

// copyGrow grows an off-heap region where it cannot be remapped: it maps a larger region,
// copies and unmaps the old one.
func copyGrow(b []byte, n int) ([]byte, error) {
	nb, err := allocOffHeap(n)
	if err != nil {
		return nil, err
	}
	nb = nb[:len(b)]
	copy(nb, b)
	freeOffHeap(b)
	return nb, nil
}
