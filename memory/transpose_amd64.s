#include "textflag.h"

// func transpose8x8(d *uint16, ld int, s *uint16, ls int)
//
// d[c*ld + r] = s[r*ls + c] for r, c in 0..8 (strides in elements): the
// eight rows of s are loaded, transposed in registers with the SSE2 unpack
// ladder (words, then dwords, then qwords) and stored as the eight rows of
// d. SSE2 is part of every amd64 CPU.
TEXT ·transpose8x8(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ ld+8(FP), R8
	MOVQ s+16(FP), SI
	MOVQ ls+24(FP), R9
	SHLQ $1, R8
	SHLQ $1, R9
	MOVOU (SI), X0
	ADDQ  R9, SI
	MOVOU (SI), X1
	ADDQ  R9, SI
	MOVOU (SI), X2
	ADDQ  R9, SI
	MOVOU (SI), X3
	ADDQ  R9, SI
	MOVOU (SI), X4
	ADDQ  R9, SI
	MOVOU (SI), X5
	ADDQ  R9, SI
	MOVOU (SI), X6
	ADDQ  R9, SI
	MOVOU (SI), X7

	// Words: t0=X0 t1=X8 t2=X2 t3=X9 t4=X4 t5=X10 t6=X6 t7=X11.
	MOVO      X0, X8
	PUNPCKLWL X1, X0
	PUNPCKHWL X1, X8
	MOVO      X2, X9
	PUNPCKLWL X3, X2
	PUNPCKHWL X3, X9
	MOVO      X4, X10
	PUNPCKLWL X5, X4
	PUNPCKHWL X5, X10
	MOVO      X6, X11
	PUNPCKLWL X7, X6
	PUNPCKHWL X7, X11

	// Dwords: u0=X0 u1=X1 u2=X8 u3=X3 u4=X4 u5=X5 u6=X10 u7=X7.
	MOVO      X0, X1
	PUNPCKLLQ X2, X0
	PUNPCKHLQ X2, X1
	MOVO      X8, X3
	PUNPCKLLQ X9, X8
	PUNPCKHLQ X9, X3
	MOVO      X4, X5
	PUNPCKLLQ X6, X4
	PUNPCKHLQ X6, X5
	MOVO      X10, X7
	PUNPCKLLQ X11, X10
	PUNPCKHLQ X11, X7

	// Qwords: columns 0..7 in X0 X12 X1 X13 X8 X14 X3 X4.
	MOVO       X0, X12
	PUNPCKLQDQ X4, X0
	PUNPCKHQDQ X4, X12
	MOVO       X1, X13
	PUNPCKLQDQ X5, X1
	PUNPCKHQDQ X5, X13
	MOVO       X8, X14
	PUNPCKLQDQ X10, X8
	PUNPCKHQDQ X10, X14
	MOVO       X3, X4
	PUNPCKLQDQ X7, X3
	PUNPCKHQDQ X7, X4

	MOVOU X0, (DI)
	ADDQ  R8, DI
	MOVOU X12, (DI)
	ADDQ  R8, DI
	MOVOU X1, (DI)
	ADDQ  R8, DI
	MOVOU X13, (DI)
	ADDQ  R8, DI
	MOVOU X8, (DI)
	ADDQ  R8, DI
	MOVOU X14, (DI)
	ADDQ  R8, DI
	MOVOU X3, (DI)
	ADDQ  R8, DI
	MOVOU X4, (DI)
	RET
