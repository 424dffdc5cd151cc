#include "textflag.h"

// func currentG() uintptr
//
// The runtime's pointer to the calling goroutine (its g), which arm64 Go
// code always keeps in the g register (R28).
TEXT ·currentG(SB),NOSPLIT,$0-8
	MOVD g, R0
	MOVD R0, ret+0(FP)
	RET
