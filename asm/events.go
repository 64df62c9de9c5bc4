package asm

// The id ranges of the A2/A3 synchronisation instructions, defined once: the
// assembler's range checks, the machine's flag and counter arrays, the
// debugger and the hazard detector all use these.
const (
	// NumEventIDs is the number of set_flag/wait_flag ids per pipe pair (a
	// 3-bit field; machine-facts §2.1). A pipe pair's flags fit one uint8.
	NumEventIDs = 8
	// NumFFTSIDs is the number of FFTS cross-core flag ids (a 4-bit field;
	// machine-facts §2.3). A fifo uses two consecutive ones.
	NumFFTSIDs = 16
	// FFTSSyncAllLo..FFTSSyncAllHi are the FFTS ids pto-isa's SYNCALL reserves;
	// user code's own ids stay below FFTSSyncAllLo.
	FFTSSyncAllLo = 11
	FFTSSyncAllHi = 14
)
