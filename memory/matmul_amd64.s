#include "textflag.h"

// func matmul4x8AVX2(a *float64, lda int, b *float64, ldb int, c *float64, ldc int, k int)
//
// c[0:4][0:8] += a[0:4][0:k] · b[0:k][0:8], strides in elements: the golden
// matmul's 4×8 tile in Y0–Y7, each step loading 8 values of b and
// broadcasting four of a. VMULPD then VADDPD round the product and the sum
// like float64(v*b) and +=: no FMA, increasing k.
TEXT ·matmul4x8AVX2(SB), NOSPLIT, $0-56
	MOVQ a+0(FP), SI
	MOVQ lda+8(FP), R8
	MOVQ b+16(FP), DI
	MOVQ ldb+24(FP), R9
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), R10
	MOVQ k+48(FP), CX
	SHLQ $3, R8
	SHLQ $3, R9
	SHLQ $3, R10
	LEAQ (SI)(R8*1), AX
	LEAQ (AX)(R8*1), BX
	LEAQ (BX)(R8*1), R11
	LEAQ (DX)(R10*1), R12
	LEAQ (R12)(R10*1), R13
	VMOVUPD (DX), Y0
	VMOVUPD 32(DX), Y1
	VMOVUPD (R12), Y2
	VMOVUPD 32(R12), Y3
	VMOVUPD (R13), Y4
	VMOVUPD 32(R13), Y5
	ADDQ    R10, R13
	VMOVUPD (R13), Y6
	VMOVUPD 32(R13), Y7
	TESTQ   CX, CX
	JEQ     done

loop:
	VMOVUPD      (DI), Y8
	VMOVUPD      32(DI), Y9
	VBROADCASTSD (SI), Y10
	VMULPD       Y8, Y10, Y11
	VADDPD       Y11, Y0, Y0
	VMULPD       Y9, Y10, Y11
	VADDPD       Y11, Y1, Y1
	VBROADCASTSD (AX), Y10
	VMULPD       Y8, Y10, Y11
	VADDPD       Y11, Y2, Y2
	VMULPD       Y9, Y10, Y11
	VADDPD       Y11, Y3, Y3
	VBROADCASTSD (BX), Y10
	VMULPD       Y8, Y10, Y11
	VADDPD       Y11, Y4, Y4
	VMULPD       Y9, Y10, Y11
	VADDPD       Y11, Y5, Y5
	VBROADCASTSD (R11), Y10
	VMULPD       Y8, Y10, Y11
	VADDPD       Y11, Y6, Y6
	VMULPD       Y9, Y10, Y11
	VADDPD       Y11, Y7, Y7
	ADDQ         $8, SI
	ADDQ         $8, AX
	ADDQ         $8, BX
	ADDQ         $8, R11
	ADDQ         R9, DI
	DECQ         CX
	JNE          loop

done:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, (R12)
	VMOVUPD Y3, 32(R12)
	SUBQ    R10, R13
	VMOVUPD Y4, (R13)
	VMOVUPD Y5, 32(R13)
	ADDQ    R10, R13
	VMOVUPD Y6, (R13)
	VMOVUPD Y7, 32(R13)
	VZEROUPPER
	RET
