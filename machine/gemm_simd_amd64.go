//go:build goexperiment.simd && amd64

package machine

import "simd/archsimd"

// Built with GOEXPERIMENT=simd on amd64, the functional matmul uses AVX2
// where the CPU has it. VMULPS then VADDPS round the product and the sum to
// fp32 exactly as the portable kernel's float32(x*b) and +=, lane by lane,
// and every lane is one c element adding its products in K order: the bits
// are the same (TestGemmF32BitIdentical runs whichever kernel is in use).
// Mul and Add are never fused (no MulAdd), so no FMA changes a rounding.
func init() {
	if archsimd.X86.AVX2() {
		gemmRows = gemmRowsAVX2
	}
}

// gemmRowsAVX2 computes rows [i0, i1) of c: 4 rows × 16 columns of c (eight
// 8-lane vectors) stay in registers while k runs, each step loading 16
// values of b and broadcasting four of a for 64 multiply-adds.
func gemmRowsAVX2(a, b, c []float32, i0, i1, K, N int) {
	n16, n8 := N&^15, N&^7
	i := i0
	for ; i+4 <= i1; i += 4 {
		a0 := a[i*K : i*K+K]
		a1 := a[(i+1)*K : (i+1)*K+K][:len(a0)]
		a2 := a[(i+2)*K : (i+2)*K+K][:len(a0)]
		a3 := a[(i+3)*K : (i+3)*K+K][:len(a0)]
		r0, r1, r2, r3 := c[i*N:i*N+N], c[(i+1)*N:(i+1)*N+N], c[(i+2)*N:(i+2)*N+N], c[(i+3)*N:(i+3)*N+N]
		j := 0
		for ; j < n16; j += 16 {
			c00, c01 := archsimd.LoadFloat32x8Slice(r0[j:]), archsimd.LoadFloat32x8Slice(r0[j+8:])
			c10, c11 := archsimd.LoadFloat32x8Slice(r1[j:]), archsimd.LoadFloat32x8Slice(r1[j+8:])
			c20, c21 := archsimd.LoadFloat32x8Slice(r2[j:]), archsimd.LoadFloat32x8Slice(r2[j+8:])
			c30, c31 := archsimd.LoadFloat32x8Slice(r3[j:]), archsimd.LoadFloat32x8Slice(r3[j+8:])
			q := j
			for k, x := range a0 {
				bk := b[q : q+16 : q+16]
				q += N
				b0, b1 := archsimd.LoadFloat32x8Slice(bk), archsimd.LoadFloat32x8Slice(bk[8:])
				v := archsimd.BroadcastFloat32x8(x)
				c00 = c00.Add(v.Mul(b0))
				c01 = c01.Add(v.Mul(b1))
				v = archsimd.BroadcastFloat32x8(a1[k])
				c10 = c10.Add(v.Mul(b0))
				c11 = c11.Add(v.Mul(b1))
				v = archsimd.BroadcastFloat32x8(a2[k])
				c20 = c20.Add(v.Mul(b0))
				c21 = c21.Add(v.Mul(b1))
				v = archsimd.BroadcastFloat32x8(a3[k])
				c30 = c30.Add(v.Mul(b0))
				c31 = c31.Add(v.Mul(b1))
			}
			c00.StoreSlice(r0[j:])
			c01.StoreSlice(r0[j+8:])
			c10.StoreSlice(r1[j:])
			c11.StoreSlice(r1[j+8:])
			c20.StoreSlice(r2[j:])
			c21.StoreSlice(r2[j+8:])
			c30.StoreSlice(r3[j:])
			c31.StoreSlice(r3[j+8:])
		}
		for ; j < n8; j += 8 {
			c0, c1 := archsimd.LoadFloat32x8Slice(r0[j:]), archsimd.LoadFloat32x8Slice(r1[j:])
			c2, c3 := archsimd.LoadFloat32x8Slice(r2[j:]), archsimd.LoadFloat32x8Slice(r3[j:])
			q := j
			for k, x := range a0 {
				bv := archsimd.LoadFloat32x8Slice(b[q : q+8 : q+8])
				q += N
				c0 = c0.Add(archsimd.BroadcastFloat32x8(x).Mul(bv))
				c1 = c1.Add(archsimd.BroadcastFloat32x8(a1[k]).Mul(bv))
				c2 = c2.Add(archsimd.BroadcastFloat32x8(a2[k]).Mul(bv))
				c3 = c3.Add(archsimd.BroadcastFloat32x8(a3[k]).Mul(bv))
			}
			c0.StoreSlice(r0[j:])
			c1.StoreSlice(r1[j:])
			c2.StoreSlice(r2[j:])
			c3.StoreSlice(r3[j:])
		}
		if j < N {
			gemmTail(a, b, c, i, i+4, j, K, N)
		}
	}
	for ; i < i1; i++ {
		ar := a[i*K : i*K+K]
		row := c[i*N : i*N+N]
		j := 0
		for ; j < n8; j += 8 {
			acc := archsimd.LoadFloat32x8Slice(row[j:])
			q := j
			for _, x := range ar {
				acc = acc.Add(archsimd.BroadcastFloat32x8(x).Mul(archsimd.LoadFloat32x8Slice(b[q : q+8 : q+8])))
				q += N
			}
			acc.StoreSlice(row[j:])
		}
		if j < N {
			gemmTail(a, b, c, i, i+1, j, K, N)
		}
	}
}

// gemmTail computes columns [j0, N) of rows [i0, i1) element by element.
func gemmTail(a, b, c []float32, i0, i1, j0, K, N int) {
	for i := i0; i < i1; i++ {
		ar := a[i*K : i*K+K]
		for j := j0; j < N; j++ {
			acc := c[i*N+j]
			q := j
			for _, x := range ar {
				acc += float32(x * b[q])
				q += N
			}
			c[i*N+j] = acc
		}
	}
}
