package main

/*
#include <stdint.h>

// The ABI version of libcubego (docs/capi.md, "ABI version"): the major
// changes when a change breaks existing callers, the minor when exports or
// JSON keys are added. A C program compares these compile-time values with
// what cg_abi_version() returns at run time.
#define CG_ABI_VERSION_MAJOR 1
#define CG_ABI_VERSION_MINOR 4
#define CG_ABI_VERSION (CG_ABI_VERSION_MAJOR * 1000 + CG_ABI_VERSION_MINOR)
*/
import "C"

// ABIMajor and ABIMinor are the ABI version. The C macros above are the one
// place it is written: cgo copies them into libcubego.h, so the header a C
// program compiles against and the library it loads cannot disagree about
// what a build is.
const (
	ABIMajor = C.CG_ABI_VERSION_MAJOR
	ABIMinor = C.CG_ABI_VERSION_MINOR
)

// cg_abi_version returns ABIMajor*1000 + ABIMinor. Unlike every other export
// it returns the value rather than a status: it cannot fail, and its
// signature never changes, so a caller can always ask a library of any
// version what it is before it looks up anything else.
//
//export cg_abi_version
func cg_abi_version() C.int32_t {
	return C.int32_t(ABIMajor*1000 + ABIMinor)
}
