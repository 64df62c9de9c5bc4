#include "textflag.h"

// func gemm4x16AVX2(a *float32, lda int, b *float32, ldb int, c *float32, ldc int, k int)
//
// c[0:4][0:16] += a[0:4][0:k] · b[0:k][0:16], strides in elements. The 4×16
// block of c stays in Y0–Y7 while k runs; each step loads 16 values of b and
// broadcasts four of a. VMULPS then VADDPS round the product and the sum to
// fp32 like the portable kernel's float32(x*b) and +=: no FMA, K order.
TEXT ·gemm4x16AVX2(SB), NOSPLIT, $0-56
	MOVQ a+0(FP), SI
	MOVQ lda+8(FP), R8
	MOVQ b+16(FP), DI
	MOVQ ldb+24(FP), R9
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), R10
	MOVQ k+48(FP), CX
	SHLQ $2, R8
	SHLQ $2, R9
	SHLQ $2, R10
	LEAQ (SI)(R8*1), AX   // a row 1
	LEAQ (AX)(R8*1), BX   // a row 2
	LEAQ (BX)(R8*1), R11  // a row 3
	LEAQ (DX)(R10*1), R12 // c row 1
	LEAQ (R12)(R10*1), R13 // c row 2
	VMOVUPS (DX), Y0
	VMOVUPS 32(DX), Y1
	VMOVUPS (R12), Y2
	VMOVUPS 32(R12), Y3
	VMOVUPS (R13), Y4
	VMOVUPS 32(R13), Y5
	ADDQ R10, R13         // c row 3
	VMOVUPS (R13), Y6
	VMOVUPS 32(R13), Y7
	TESTQ CX, CX
	JEQ   done

loop:
	VMOVUPS      (DI), Y8
	VMOVUPS      32(DI), Y9
	VBROADCASTSS (SI), Y10
	VMULPS       Y8, Y10, Y11
	VADDPS       Y11, Y0, Y0
	VMULPS       Y9, Y10, Y11
	VADDPS       Y11, Y1, Y1
	VBROADCASTSS (AX), Y10
	VMULPS       Y8, Y10, Y11
	VADDPS       Y11, Y2, Y2
	VMULPS       Y9, Y10, Y11
	VADDPS       Y11, Y3, Y3
	VBROADCASTSS (BX), Y10
	VMULPS       Y8, Y10, Y11
	VADDPS       Y11, Y4, Y4
	VMULPS       Y9, Y10, Y11
	VADDPS       Y11, Y5, Y5
	VBROADCASTSS (R11), Y10
	VMULPS       Y8, Y10, Y11
	VADDPS       Y11, Y6, Y6
	VMULPS       Y9, Y10, Y11
	VADDPS       Y11, Y7, Y7
	ADDQ         $4, SI
	ADDQ         $4, AX
	ADDQ         $4, BX
	ADDQ         $4, R11
	ADDQ         R9, DI
	DECQ         CX
	JNE          loop

done:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, (R12)
	VMOVUPS Y3, 32(R12)
	SUBQ    R10, R13
	VMOVUPS Y4, (R13)
	VMOVUPS Y5, 32(R13)
	ADDQ    R10, R13
	VMOVUPS Y6, (R13)
	VMOVUPS Y7, 32(R13)
	VZEROUPPER
	RET
