package asm

// Opcode identifies an instruction: every ISA table row has one (OpInfo.Op),
// decoded once when the assembler looks the mnemonic up, so the machine and
// the linter switch on an integer instead of comparing names. The constant is
// "Op" followed by the canonical name with each part capitalised and the
// separators dropped (tmatmul.acc → OpTmatmulAcc, set_flag → OpSetFlag).
// Adding an instruction adds its constant and its opcodeNames row here, and
// its def row in isa.go; TestOpcodesCoverISA fails when the two disagree.
type Opcode uint16

const (
	OpNone Opcode = iota
	OpDsb
	OpFftsSet
	OpFftsWait
	OpLd
	OpPipeBarrier
	OpSetFlag
	OpSt
	OpSyncall
	OpTabs
	OpTadd
	OpTadds
	OpTallgather
	OpTand
	OpTbroadcast
	OpTcmp
	OpTcmps
	OpTcolexpand
	OpTcolexpandadd
	OpTcolexpanddiv
	OpTcolexpandmax
	OpTcolexpandmin
	OpTcolexpandmul
	OpTcolexpandsub
	OpTcolmax
	OpTcolmin
	OpTcolsum
	OpTcvt
	OpTdiv
	OpTdivs
	OpTexp
	OpTexpands
	OpTextract
	OpTgather
	OpTgatherComm
	OpTgemv
	OpTgemvAcc
	OpTgemvBias
	OpTget
	OpTgetAsync
	OpTprefetchAsync
	OpTprint
	OpTinsert
	OpTload
	OpTlog
	OpTlrelu
	OpTmatmul
	OpTmatmulAcc
	OpTmatmulBias
	OpTmax
	OpTmaxs
	OpTmin
	OpTmins
	OpTmov
	OpTmovA2m
	OpTmovM2b
	OpTmovM2l
	OpTmovM2r
	OpTmovM2s
	OpTmovV2v
	OpTmul
	OpTmuls
	OpTneg
	OpTnot
	OpTnotify
	OpTor
	OpTpop
	OpTprefetch
	OpTprelu
	OpTpush
	OpTput
	OpTputAsync
	OpTrecip
	OpTreduce
	OpTrelu
	OpTrowexpand
	OpTrowexpandadd
	OpTrowexpanddiv
	OpTrowexpandmax
	OpTrowexpandmin
	OpTrowexpandmul
	OpTrowexpandsub
	OpTrowmax
	OpTrowmin
	OpTrowsum
	OpTrsqrt
	OpTscatter
	OpTscatterComm
	OpTsdivs
	OpTsel
	OpTsels
	OpTshl
	OpTshr
	OpTsqrt
	OpTstore
	OpTsub
	OpTsubs
	OpTtest
	OpTtrans
	OpTwait
	OpTxor
	OpWaitAsync
	OpWaitFlag
	// pto-isa instructions added with isa_more.go.
	OpTpow
	OpTrem
	OpTfmod
	OpTsubrelu
	OpTands
	OpTors
	OpTxors
	OpTshls
	OpTshrs
	OpTpows
	OpTrems
	OpTfmods
	OpTfusedmuladd
	OpTfusedmuladdrelu
	OpTmuladddst
	OpTaxpy
	OpTrowprod
	OpTcolprod
	OpTrowexpandexpdif
	OpTcolexpandexpdif
	OpTpartadd
	OpTpartmul
	OpTpartmax
	OpTpartmin
	OpTpartargmax
	OpTpartargmin
	OpTrowargmax
	OpTrowargmaxVal
	OpTrowargmin
	OpTrowargminVal
	OpTcolargmax
	OpTcolargmaxVal
	OpTcolargmin
	OpTcolargminVal
	OpTsort32
	OpTmrgsort
	OpTmrgsortLists
	OpTci
	OpTtri
	OpTfillpad
	OpTconcat
	OpTpairreducesum
	OpTgatherb
	OpTdequant
	OpTgatherMask
	OpTaddreluconv
	OpTadddeqrelu
	OpTquant
	// GM gather/scatter, IMG2COL and fixpipe quantisation (isa_img.go).
	OpMgather
	OpMscatter
	OpSetfmatrix
	OpSetImg2colPadding
	OpSetImg2colRpt
	OpTimg2col
	OpSetQuantScalar
	OpSetQuantVector
	OpTstoreFp
	OpTstoreQ
	OpTmovFp
	OpTmovQ
	OpTextractFp
	OpTinsertFp
	// Tile views (isa_view.go).
	OpTassign
	OpTsubview
	OpTreshape
	OpTalloc
	OpTfree
	OpTpushSlot
	OpTpopSlot
	NumOpcodes
)

var opcodeNames = [NumOpcodes]string{
	OpDsb:              "dsb",
	OpFftsSet:          "ffts_set",
	OpFftsWait:         "ffts_wait",
	OpLd:               "ld",
	OpPipeBarrier:      "pipe_barrier",
	OpSetFlag:          "set_flag",
	OpSt:               "st",
	OpSyncall:          "syncall",
	OpTabs:             "tabs",
	OpTadd:             "tadd",
	OpTadds:            "tadds",
	OpTallgather:       "tallgather",
	OpTand:             "tand",
	OpTbroadcast:       "tbroadcast",
	OpTcmp:             "tcmp",
	OpTcmps:            "tcmps",
	OpTcolexpand:       "tcolexpand",
	OpTcolexpandadd:    "tcolexpandadd",
	OpTcolexpanddiv:    "tcolexpanddiv",
	OpTcolexpandmax:    "tcolexpandmax",
	OpTcolexpandmin:    "tcolexpandmin",
	OpTcolexpandmul:    "tcolexpandmul",
	OpTcolexpandsub:    "tcolexpandsub",
	OpTcolmax:          "tcolmax",
	OpTcolmin:          "tcolmin",
	OpTcolsum:          "tcolsum",
	OpTcvt:             "tcvt",
	OpTdiv:             "tdiv",
	OpTdivs:            "tdivs",
	OpTexp:             "texp",
	OpTexpands:         "texpands",
	OpTextract:         "textract",
	OpTgather:          "tgather",
	OpTgatherComm:      "tgather.comm",
	OpTgemv:            "tgemv",
	OpTgemvAcc:         "tgemv.acc",
	OpTgemvBias:        "tgemv.bias",
	OpTget:             "tget",
	OpTgetAsync:        "tget_async",
	OpTprefetchAsync:   "tprefetch_async",
	OpTprint:           "tprint",
	OpTinsert:          "tinsert",
	OpTload:            "tload",
	OpTlog:             "tlog",
	OpTlrelu:           "tlrelu",
	OpTmatmul:          "tmatmul",
	OpTmatmulAcc:       "tmatmul.acc",
	OpTmatmulBias:      "tmatmul.bias",
	OpTmax:             "tmax",
	OpTmaxs:            "tmaxs",
	OpTmin:             "tmin",
	OpTmins:            "tmins",
	OpTmov:             "tmov",
	OpTmovA2m:          "tmov.a2m",
	OpTmovM2b:          "tmov.m2b",
	OpTmovM2l:          "tmov.m2l",
	OpTmovM2r:          "tmov.m2r",
	OpTmovM2s:          "tmov.m2s",
	OpTmovV2v:          "tmov.v2v",
	OpTmul:             "tmul",
	OpTmuls:            "tmuls",
	OpTneg:             "tneg",
	OpTnot:             "tnot",
	OpTnotify:          "tnotify",
	OpTor:              "tor",
	OpTpop:             "tpop",
	OpTprefetch:        "tprefetch",
	OpTprelu:           "tprelu",
	OpTpush:            "tpush",
	OpTput:             "tput",
	OpTputAsync:        "tput_async",
	OpTrecip:           "trecip",
	OpTreduce:          "treduce",
	OpTrelu:            "trelu",
	OpTrowexpand:       "trowexpand",
	OpTrowexpandadd:    "trowexpandadd",
	OpTrowexpanddiv:    "trowexpanddiv",
	OpTrowexpandmax:    "trowexpandmax",
	OpTrowexpandmin:    "trowexpandmin",
	OpTrowexpandmul:    "trowexpandmul",
	OpTrowexpandsub:    "trowexpandsub",
	OpTrowmax:          "trowmax",
	OpTrowmin:          "trowmin",
	OpTrowsum:          "trowsum",
	OpTrsqrt:           "trsqrt",
	OpTscatter:         "tscatter",
	OpTscatterComm:     "tscatter.comm",
	OpTsdivs:           "tsdivs",
	OpTsel:             "tsel",
	OpTsels:            "tsels",
	OpTshl:             "tshl",
	OpTshr:             "tshr",
	OpTsqrt:            "tsqrt",
	OpTstore:           "tstore",
	OpTsub:             "tsub",
	OpTsubs:            "tsubs",
	OpTtest:            "ttest",
	OpTtrans:           "ttrans",
	OpTwait:            "twait",
	OpTxor:             "txor",
	OpWaitAsync:        "wait_async",
	OpWaitFlag:         "wait_flag",
	OpTpow:             "tpow",
	OpTrem:             "trem",
	OpTfmod:            "tfmod",
	OpTsubrelu:         "tsubrelu",
	OpTands:            "tands",
	OpTors:             "tors",
	OpTxors:            "txors",
	OpTshls:            "tshls",
	OpTshrs:            "tshrs",
	OpTpows:            "tpows",
	OpTrems:            "trems",
	OpTfmods:           "tfmods",
	OpTfusedmuladd:     "tfusedmuladd",
	OpTfusedmuladdrelu: "tfusedmuladdrelu",
	OpTmuladddst:       "tmuladddst",
	OpTaxpy:            "taxpy",
	OpTrowprod:         "trowprod",
	OpTcolprod:         "tcolprod",
	OpTrowexpandexpdif: "trowexpandexpdif",
	OpTcolexpandexpdif: "tcolexpandexpdif",
	OpTpartadd:         "tpartadd",
	OpTpartmul:         "tpartmul",
	OpTpartmax:         "tpartmax",
	OpTpartmin:         "tpartmin",
	OpTpartargmax:      "tpartargmax",
	OpTpartargmin:      "tpartargmin",
	OpTrowargmax:       "trowargmax",
	OpTrowargmaxVal:    "trowargmax.val",
	OpTrowargmin:       "trowargmin",
	OpTrowargminVal:    "trowargmin.val",
	OpTcolargmax:       "tcolargmax",
	OpTcolargmaxVal:    "tcolargmax.val",
	OpTcolargmin:       "tcolargmin",
	OpTcolargminVal:    "tcolargmin.val",
	OpTsort32:          "tsort32",
	OpTmrgsort:         "tmrgsort",
	OpTmrgsortLists:    "tmrgsort.lists",
	OpTci:              "tci",
	OpTtri:             "ttri",
	OpTfillpad:         "tfillpad",
	OpTconcat:          "tconcat",
	OpTpairreducesum:   "tpairreducesum",
	OpTgatherb:         "tgatherb",
	OpTdequant:         "tdequant",
	OpTgatherMask:      "tgather.mask",
	OpTaddreluconv:     "taddreluconv",
	OpTadddeqrelu:      "tadddeqrelu",
	OpTquant:           "tquant",

	// isa_img.go
	OpMgather:           "mgather",
	OpMscatter:          "mscatter",
	OpSetfmatrix:        "setfmatrix",
	OpSetImg2colPadding: "set_img2col_padding",
	OpSetImg2colRpt:     "set_img2col_rpt",
	OpTimg2col:          "timg2col",
	OpSetQuantScalar:    "set_quant_scalar",
	OpSetQuantVector:    "set_quant_vector",
	OpTstoreFp:          "tstore.fp",
	OpTstoreQ:           "tstore.q",
	OpTmovFp:            "tmov.fp",
	OpTmovQ:             "tmov.q",
	OpTextractFp:        "textract.fp",
	OpTinsertFp:         "tinsert.fp",
	OpTassign:           "tassign",
	OpTsubview:          "tsubview",
	OpTreshape:          "treshape",
	OpTalloc:            "talloc",
	OpTfree:             "tfree",
	OpTpushSlot:         "tpush.slot",
	OpTpopSlot:          "tpop.slot",
}

// String is the opcode's canonical mnemonic.
func (o Opcode) String() string {
	if o < NumOpcodes && o != OpNone {
		return opcodeNames[o]
	}
	return "invalid"
}

// opcodeOf maps a canonical name to its opcode (built once, for the table).
var opcodeOf = func() map[string]Opcode {
	m := make(map[string]Opcode, NumOpcodes)
	for o := OpNone + 1; o < NumOpcodes; o++ {
		m[opcodeNames[o]] = o
	}
	return m
}()

// infoOf is each opcode's table row, filled when the table is built.
var infoOf [NumOpcodes]*OpInfo

// Info is opcode o's ISA table row, or nil.
func (o Opcode) Info() *OpInfo {
	if o < NumOpcodes {
		return infoOf[o]
	}
	return nil
}
