package kernels

import "fmt"

// CopyStrided copies the view src into the C-contiguous dst of the same
// dtype and shape, element by element as bytes. It materialises transposes,
// broadcasts and strided slices.
func CopyStrided(dst, src Operand) error {
	clearUpper()
	if dst.DType != src.DType {
		return fmt.Errorf("kernels: copy from %s to %s: dtypes must match", src.DType, dst.DType)
	}
	n, d, err := checkDst(dst)
	if err != nil {
		return err
	}
	strides, err := checkInput("source", src, dst.Shape)
	if err != nil || n == 0 {
		return err
	}
	size := dst.DType.Size()
	if isCContiguous(dst.Shape, strides) {
		copy(d, src.Data[src.Offset*size:(src.Offset+n)*size])
		return nil
	}
	shape, cst := coalesce(dst.Shape, [][]int{strides})
	switch size {
	case 1:
		copyStrided(as[uint8](d), as[uint8](src.Data), shape, cst[0], src.Offset)
	case 2:
		copyStrided(as[uint16](d), as[uint16](src.Data), shape, cst[0], src.Offset)
	case 4:
		copyStrided(as[uint32](d), as[uint32](src.Data), shape, cst[0], src.Offset)
	case 8:
		copyStrided(as[uint64](d), as[uint64](src.Data), shape, cst[0], src.Offset)
	case 16:
		copyStrided(as[[2]uint64](d), as[[2]uint64](src.Data), shape, cst[0], src.Offset)
	}
	return nil
}

// A transposing copy runs over tiles of tileRows × tileCols elements. The
// source lines of a tile stay in L1 while its rows are written; only 8
// columns, because with power-of-two strides every column's line maps to
// the same L1 set (8 ways): 32×32 tiles run at half the speed for 1024².
const (
	tileRows = 32
	tileCols = 8
)

// copyStrided copies the coalesced view (shape, strides, off) of s into d.
func copyStrided[T any](d, s []T, shape, strides []int, off int) {
	last := len(shape) - 1
	inner := strides[last]
	// p is the dimension that walks the source most densely, if denser than
	// the inner one (a transpose): then copy tile by tile over (p, last).
	p := -1
	if inner > 1 {
		for k := range last {
			if strides[k] != 0 && strides[k] < inner && (p < 0 || strides[k] < strides[p]) {
				p = k
			}
		}
	}
	if p >= 0 {
		copyTiled(d, s, shape, strides, off, p)
		return
	}
	rowLen := shape[last]
	idx := make([]int, last)
	for pos := 0; pos < len(d); pos += rowLen {
		row := d[pos : pos+rowLen]
		switch {
		case inner == 0:
			v := s[off]
			for i := range row {
				row[i] = v
			}
		case inner == 1 && rowLen >= 16:
			copy(row, s[off:off+rowLen])
		default:
			// Meaning: for i := range row { row[i] = s[off+i*inner] }.
			j := off
			for i := range row {
				row[i] = s[j]
				j += inner
			}
		}
		for k := last - 1; k >= 0; k-- {
			idx[k]++
			off += strides[k]
			if idx[k] < shape[k] {
				break
			}
			off -= strides[k] * shape[k]
			idx[k] = 0
		}
	}
}

// copyTiled copies with 2-D tiles over dimensions p and the last one, and an
// odometer over the others.
func copyTiled[T any](d, s []T, shape, strides []int, off, p int) {
	last := len(shape) - 1
	cs := cStrides(shape)
	var outer []int
	for k := range last {
		if k != p {
			outer = append(outer, k)
		}
	}
	idx := make([]int, len(outer))
	rows, cols := shape[p], shape[last]
	dRow, sRow, sCol := cs[p], strides[p], strides[last]
	dOff := 0
	for {
		tile2D(d, dOff, dRow, s, off, sRow, sCol, rows, cols)
		k := len(idx) - 1
		for ; k >= 0; k-- {
			dim := outer[k]
			idx[k]++
			off += strides[dim]
			dOff += cs[dim]
			if idx[k] < shape[dim] {
				break
			}
			off -= strides[dim] * shape[dim]
			dOff -= cs[dim] * shape[dim]
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

// tile2D copies a rows × cols matrix whose element (r, c) is
// s[sOff+r*sRow+c*sCol] to d[dOff+r*dRow+c], tile by tile.
func tile2D[T any](d []T, dOff, dRow int, s []T, sOff, sRow, sCol, rows, cols int) {
	for r0 := 0; r0 < rows; r0 += tileRows {
		r1 := min(r0+tileRows, rows)
		for c0 := 0; c0 < cols; c0 += tileCols {
			c1 := min(c0+tileCols, cols)
			for r := r0; r < r1; r++ {
				row := d[dOff+r*dRow+c0 : dOff+r*dRow+c1]
				j := sOff + r*sRow + c0*sCol
				for i := range row {
					row[i] = s[j]
					j += sCol
				}
			}
		}
	}
}
