package colcache

import (
	"encoding/binary"
	"unsafe"
)

// buffer is a growable off-heap byte array: growing remaps it to twice its size (on Linux
// without copying), so a base being built never holds more than twice its size.
type buffer struct {
	b []byte
}

// grow makes room for n more bytes.
func (f *buffer) grow(n int) error {
	if len(f.b)+n <= cap(f.b) {
		return nil
	}
	nb, err := growOffHeap(f.b, max(2*cap(f.b), len(f.b)+n, 64<<10))
	if err != nil {
		return err
	}
	f.b = nb
	return nil
}

func (f *buffer) append(p []byte) error {
	if err := f.grow(len(p)); err != nil {
		return err
	}
	f.b = append(f.b, p...) // within capacity: never reallocates onto the heap
	return nil
}

func (f *buffer) appendUint32(v uint32) error {
	if err := f.grow(4); err != nil {
		return err
	}
	f.b = binary.NativeEndian.AppendUint32(f.b, v)
	return nil
}

// uint32s views the buffer as the uint32s appendUint32 wrote. Mapped memory is page aligned.
func (f *buffer) uint32s() []uint32 {
	if len(f.b) == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(f.b))), len(f.b)/4)
}

func (f *buffer) free() {
	freeOffHeap(f.b)
	f.b = nil
}
