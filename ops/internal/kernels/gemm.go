package kernels

import "sync"

// gemm is a cache-blocked matrix product for float32 and float64 in the
// layout of BLIS and GotoBLAS: B is packed kc×nr panels at a time and A
// mc×kc blocks in mr-row panels, and a register-tiled micro-kernel adds
// each mr×nr tile of C. With GOEXPERIMENT=simd on amd64 the micro-kernels
// use AVX-512 or AVX2+FMA (gemm_simd_amd64.go) and run 3–6× faster than
// gonum's pure-Go Gemm; elsewhere gemmKernels64/32 stay empty and Matmul
// uses gonum. Its meaning is the plain loop
//
//	for i, j: c[i*n+j] = (first ? 0 : c[i*n+j]) + Σ_p a[i*k+p] * b[p*n+j]
//
// for row-major a (m×k), b (k×n) and c (m×n). The products are fused
// multiply-adds, so results can differ from gonum's in the last bit.

// Block sizes: a kc×nr panel of B and an mr×kc panel of A stay in L1 while
// the micro-kernel runs, an mc×kc block of A in L2, a kc×nc block of B in
// L3. The two pack buffers take (mc + nc)·kc elements: 2.3 MB for float64,
// taken from a pool, so a task running a matmul holds them beside its chunk
// buffers.
const (
	gemmKC = 256
	gemmMC = 96
	gemmNC = 1024
)

// gemmKernels is the micro-kernel for one element type and its tile shape.
type gemmKernels[T float32 | float64] struct {
	mr, nr int
	kernel func(kk int, ap, bp, c []T, ldc int)
}

var (
	gemmKernels64 gemmKernels[float64]
	gemmKernels32 gemmKernels[float32]
	gemmPack64    = sync.Pool{New: func() any { return new(gemmBuffers[float64]) }}
	gemmPack32    = sync.Pool{New: func() any { return new(gemmBuffers[float32]) }}
)

type gemmBuffers[T float32 | float64] struct{ a, b []T }

// gemm computes c = a·b (first) or c += a·b and reports whether it could:
// false when no micro-kernel exists for T on this CPU and build. With
// transA, a holds the k×m transpose of the left operand; with transB, b the
// n×k transpose of the right one.
func gemm[T float32 | float64](ks gemmKernels[T], pool *sync.Pool, m, k, n int, a, b, c []T, transA, transB, first bool) bool {
	if ks.kernel == nil {
		return false
	}
	if first {
		clear(c[:m*n])
	}
	mr, nr := ks.mr, ks.nr
	nc := min(gemmNC, roundUp(n, nr))
	mc := min(gemmMC, roundUp(m, mr))
	kc := min(gemmKC, k)
	buf := pool.Get().(*gemmBuffers[T])
	defer pool.Put(buf)
	if cap(buf.a) < mc*kc {
		buf.a = make([]T, gemmMC*gemmKC)
	}
	if cap(buf.b) < nc*kc {
		buf.b = make([]T, gemmNC*gemmKC)
	}
	ap, bp := buf.a[:mc*kc], buf.b[:nc*kc]
	tile := make([]T, mr*nr)
	for jc := 0; jc < n; jc += nc {
		nb := min(nc, n-jc)
		for pc := 0; pc < k; pc += kc {
			kb := min(kc, k-pc)
			if transB {
				packBT(bp, b, k, pc, kb, jc, nb, nr)
			} else {
				packB(bp, b, n, pc, kb, jc, nb, nr)
			}
			for ic := 0; ic < m; ic += mc {
				mb := min(mc, m-ic)
				if transA {
					packAT(ap, a, m, ic, mb, pc, kb, mr)
				} else {
					packA(ap, a, k, ic, mb, pc, kb, mr)
				}
				for jp := 0; jp < nb; jp += nr {
					w := min(nr, nb-jp)
					for ip := 0; ip < mb; ip += mr {
						h := min(mr, mb-ip)
						at, bt := ap[ip*kb:], bp[jp*kb:]
						ct := c[(ic+ip)*n+jc+jp:]
						if h == mr && w == nr {
							ks.kernel(kb, at, bt, ct, n)
							continue
						}
						// An edge tile: the kernel adds into a full
						// scratch tile, whose valid part is added to c.
						clear(tile)
						ks.kernel(kb, at, bt, tile, nr)
						for i := range h {
							row := ct[i*n : i*n+w]
							for j, v := range tile[i*nr : i*nr+w] {
								row[j] += v
							}
						}
					}
				}
			}
		}
	}
	return true
}

// packB copies b[pc:pc+kb, jc:jc+nb] (rows ldb apart) into kb×nr panels,
// one after another, zero-padding the last panel's missing columns.
func packB[T float32 | float64](dst, b []T, ldb, pc, kb, jc, nb, nr int) {
	for jp := 0; jp < nb; jp += nr {
		w := min(nr, nb-jp)
		panel := dst[jp*kb : jp*kb+kb*nr]
		for p := range kb {
			row := panel[p*nr : p*nr+nr]
			copy(row, b[(pc+p)*ldb+jc+jp:(pc+p)*ldb+jc+jp+w])
			clear(row[w:])
		}
	}
}

// packA copies a[ic:ic+mb, pc:pc+kb] (rows lda apart) into kb×mr panels
// stored step-major (the mr values of one step together), zero-padding the
// last panel's missing rows.
func packA[T float32 | float64](dst, a []T, lda, ic, mb, pc, kb, mr int) {
	for ip := 0; ip < mb; ip += mr {
		h := min(mr, mb-ip)
		panel := dst[ip*kb : ip*kb+kb*mr]
		for i := range mr {
			if i >= h {
				for p := range kb {
					panel[p*mr+i] = 0
				}
				continue
			}
			src := a[(ic+ip+i)*lda+pc : (ic+ip+i)*lda+pc+kb]
			for p, v := range src {
				panel[p*mr+i] = v
			}
		}
	}
}

// packBT is packB for b stored transposed: bt[j, p] (rows ldb apart) is
// b[p, j].
func packBT[T float32 | float64](dst, bt []T, ldb, pc, kb, jc, nb, nr int) {
	for jp := 0; jp < nb; jp += nr {
		w := min(nr, nb-jp)
		panel := dst[jp*kb : jp*kb+kb*nr]
		for j := range nr {
			if j >= w {
				for p := range kb {
					panel[p*nr+j] = 0
				}
				continue
			}
			src := bt[(jc+jp+j)*ldb+pc : (jc+jp+j)*ldb+pc+kb]
			for p, v := range src {
				panel[p*nr+j] = v
			}
		}
	}
}

// packAT is packA for a stored transposed: at[p, i] (rows lda apart) is
// a[i, p]; each step's mr values are contiguous in at.
func packAT[T float32 | float64](dst, at []T, lda, ic, mb, pc, kb, mr int) {
	for ip := 0; ip < mb; ip += mr {
		h := min(mr, mb-ip)
		panel := dst[ip*kb : ip*kb+kb*mr]
		for p := range kb {
			row := panel[p*mr : p*mr+mr]
			copy(row, at[(pc+p)*lda+ic+ip:(pc+p)*lda+ic+ip+h])
			clear(row[h:])
		}
	}
}

func roundUp(x, to int) int { return (x + to - 1) / to * to }
