package kernels

// kernel is an elementwise loop over contiguous blocks: dst and the inputs
// a, b and c (nil when absent) hold the same number of elements. Each
// operation picks its kernel once per call; the driver calls it once per
// block, never once per element.
type kernel func(dst, a, b, c []byte)

const (
	// blockLen is the number of elements of a gathered block: small enough
	// for the scratch blocks of three inputs to stay in L1/L2 cache.
	blockLen = 2048
	// minRowLen is the row length from which each row is a block of its own;
	// shorter rows are gathered several at a time so that one kernel call
	// covers up to blockLen elements.
	minRowLen = 256
	// Rows of up to maxTiledRowLen elements with a transposed input are
	// processed tiledBlockLen elements (at least 4 rows) at a time.
	maxTiledRowLen = 4096
	tiledBlockLen  = 16384
)

// How apply produces an input's blocks in the general path.
const (
	blockDirect   = iota // the input is C-contiguous: blocks are subslices
	blockRow             // inner stride 1, one row per block: subslices of the row
	blockConstant        // every stride 0: one pre-filled block serves all
	blockGathered        // copied into a scratch block
)

var inputRoles = [...]string{"input 0", "input 1", "input 2"}

// apply runs k over the C-contiguous dst and up to three inputs of dst's
// shape with any non-negative strides.
//
// When every input is C-contiguous k runs once over the whole buffers. Else
// the shape is coalesced and walked row by row (the last dimension) with an
// odometer over the outer dimensions; inputs whose rows are not contiguous
// are gathered into scratch blocks (numpy's buffered iteration), so every
// kernel only ever sees contiguous blocks. Long rows are blocks of their own
// (split every blockLen elements); short rows, and rows of a transposed
// input, are gathered several at a time, the latter tile by tile.
func apply(dst Operand, ins []Operand, k kernel) error {
	n, d, err := checkDst(dst)
	if err != nil {
		return err
	}
	strides := make([][]int, len(ins))
	contiguous := true
	for i, in := range ins {
		s, err := checkInput(inputRoles[i], in, dst.Shape)
		if err != nil {
			return err
		}
		strides[i] = s
		contiguous = contiguous && isCContiguous(dst.Shape, s)
	}
	if n == 0 {
		return nil
	}
	var blk [3][]byte
	if uniform := len(ins) > 0 && n > 1; uniform {
		for _, st := range strides {
			uniform = uniform && allZero(st)
		}
		if uniform {
			// Every input is one value broadcast (a constant, a constant
			// virtual array): so is the result, since a kernel computes an
			// element from its operands' values alone. Meaning: the loop
			// below, with one result computed and copied to every element.
			for i, in := range ins {
				sz := in.DType.Size()
				blk[i] = in.Data[in.Offset*sz : (in.Offset+1)*sz]
			}
			dsz := dst.DType.Size()
			k(d[:dsz], blk[0], blk[1], blk[2])
			Fill(d, dst.DType, d[:dsz])
			return nil
		}
	}
	if contiguous {
		// Fast path, meaning: for i := range dst { dst[i] = f(a[i], b[i], c[i]) }.
		for i, in := range ins {
			sz := in.DType.Size()
			blk[i] = in.Data[in.Offset*sz : (in.Offset+n)*sz]
		}
		k(d, blk[0], blk[1], blk[2])
		return nil
	}

	shape, cst := coalesce(dst.Shape, strides)
	nd := len(shape)
	rowLen := shape[nd-1]
	rows := n / rowLen

	var (
		data    [3][]byte
		size    [3]int
		inner   [3]int
		off     [3]int // element index of the current row's first element
		mode    [3]int
		tiled   [3]bool // gathered several rows at a time, column by column
		anyTile bool
		scratch [3][]byte
	)
	cs := cStrides(shape)
	for i, in := range ins {
		data[i], size[i], inner[i], off[i] = in.Data, in.DType.Size(), cst[i][nd-1], in.Offset
		switch {
		case sameShape(cst[i], cs):
			mode[i] = blockDirect
		case allZero(cst[i]):
			mode[i] = blockConstant
		default:
			mode[i] = blockGathered
			// A transposed input walks the next-outer dimension more densely
			// than its rows. Gathered one row at a time it would touch a cache
			// line per element (and, for power-of-two strides, thrash one
			// cache set); a tile of rows gathered column by column reads whole
			// lines.
			if nd >= 2 && cst[i][nd-2] > 0 && cst[i][nd-2] < inner[i] && rows > 1 {
				tiled[i], anyTile = true, true
			}
		}
	}
	rowsPerBlock := 1
	switch {
	case rowLen < minRowLen:
		rowsPerBlock = min(blockLen/rowLen, rows)
	case anyTile && rowLen <= maxTiledRowLen:
		rowsPerBlock = min(tiledBlockLen/rowLen, rows)
	}
	blockElems := min(rowLen, blockLen) * rowsPerBlock
	for i := range ins {
		switch {
		case mode[i] == blockConstant:
			scratch[i] = make([]byte, blockElems*size[i])
			gather(scratch[i], data[i], off[i], 0, size[i])
		case mode[i] == blockGathered && inner[i] == 1 && rowsPerBlock == 1:
			mode[i] = blockRow
		case mode[i] == blockGathered:
			scratch[i] = make([]byte, blockElems*size[i])
		}
	}
	idx := make([]int, nd-1)
	dsz := dst.DType.Size()
	pos := 0 // flat index of the current block's first element

	// block returns input i's block of cnt elements starting at element
	// start of the current row (start > 0 only with one row per block).
	block := func(i, start, cnt int) []byte {
		sz := size[i]
		switch mode[i] {
		case blockDirect:
			p := ins[i].Offset + pos
			return data[i][p*sz : (p+cnt)*sz]
		case blockRow:
			p := off[i] + start
			return data[i][p*sz : (p+cnt)*sz]
		}
		return scratch[i][:cnt*sz]
	}

	if rowsPerBlock == 1 {
		for r := 0; r < rows; r++ {
			for s := 0; s < rowLen; s += blockLen {
				cnt := min(blockLen, rowLen-s)
				for i := range ins {
					blk[i] = block(i, s, cnt)
					if mode[i] == blockGathered {
						gather(blk[i], data[i], off[i]+s*inner[i], inner[i], size[i])
					}
				}
				k(d[pos*dsz:(pos+cnt)*dsz], blk[0], blk[1], blk[2])
				pos += cnt
			}
			advance(idx, shape, cst, &off)
		}
		return nil
	}
	for r := 0; r < rows; {
		m := min(rowsPerBlock, rows-r)
		if anyTile {
			// A tile's rows must be equally spaced: stop at the end of
			// dimension nd-2.
			m = min(m, shape[nd-2]-idx[nd-2])
			for i := range ins {
				if tiled[i] {
					gatherTile(scratch[i][:m*rowLen*size[i]], data[i], off[i], cst[i][nd-2], inner[i], m, size[i])
				}
			}
		}
		for j := range m {
			for i := range ins {
				if mode[i] == blockGathered && !tiled[i] {
					sz := size[i]
					gather(scratch[i][j*rowLen*sz:(j+1)*rowLen*sz], data[i], off[i], inner[i], sz)
				}
			}
			advance(idx, shape, cst, &off)
		}
		cnt := m * rowLen
		for i := range ins {
			blk[i] = block(i, 0, cnt)
		}
		k(d[pos*dsz:(pos+cnt)*dsz], blk[0], blk[1], blk[2])
		pos += cnt
		r += m
	}
	return nil
}

// advance moves the odometer idx over the outer dimensions of shape (all but
// the last) to the next row and updates each operand's row offset.
func advance(idx, shape []int, strides [][]int, off *[3]int) {
	for d := len(idx) - 1; d >= 0; d-- {
		idx[d]++
		if idx[d] < shape[d] {
			for i := range strides {
				off[i] += strides[i][d]
			}
			return
		}
		idx[d] = 0
		for i := range strides {
			off[i] -= strides[i][d] * (shape[d] - 1)
		}
	}
}

func allZero(s []int) bool {
	for _, v := range s {
		if v != 0 {
			return false
		}
	}
	return true
}

// gather copies len(dst)/size elements of size bytes from src, starting at
// element off and stepping stride elements.
func gather(dst, src []byte, off, stride, size int) {
	switch size {
	case 1:
		gatherLoop(as[uint8](dst), as[uint8](src), off, stride)
	case 2:
		gatherLoop(as[uint16](dst), as[uint16](src), off, stride)
	case 4:
		gatherLoop(as[uint32](dst), as[uint32](src), off, stride)
	case 8:
		gatherLoop(as[uint64](dst), as[uint64](src), off, stride)
	case 16:
		gatherLoop(as[[2]uint64](dst), as[[2]uint64](src), off, stride)
	}
}

// gatherTile copies m rows of len(dst)/size/m elements: row r, column c is
// source element off + r*rowStride + c*colStride.
func gatherTile(dst, src []byte, off, rowStride, colStride, m, size int) {
	cols := len(dst) / size / m
	switch size {
	case 1:
		tile2D(as[uint8](dst), 0, cols, as[uint8](src), off, rowStride, colStride, m, cols)
	case 2:
		tile2D(as[uint16](dst), 0, cols, as[uint16](src), off, rowStride, colStride, m, cols)
	case 4:
		tile2D(as[uint32](dst), 0, cols, as[uint32](src), off, rowStride, colStride, m, cols)
	case 8:
		tile2D(as[uint64](dst), 0, cols, as[uint64](src), off, rowStride, colStride, m, cols)
	case 16:
		tile2D(as[[2]uint64](dst), 0, cols, as[[2]uint64](src), off, rowStride, colStride, m, cols)
	}
}

func gatherLoop[T any](d, s []T, off, stride int) {
	switch stride {
	case 0:
		// Meaning: for i := range d { d[i] = s[off] }.
		v := s[off]
		for i := range d {
			d[i] = v
		}
	case 1:
		copy(d, s[off:off+len(d)])
	default:
		for i := range d {
			d[i] = s[off]
			off += stride
		}
	}
}
