#include "textflag.h"

// func currentG() uintptr
//
// The runtime's pointer to the calling goroutine (its g), from the thread's
// TLS slot, where the runtime keeps it for assembly such as this.
TEXT ·currentG(SB),NOSPLIT,$0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET
