// Command capi is the C ABI of cubego, built with -buildmode=c-shared into
// libcubego.so. It holds marshalling only (handles, status codes, JSON,
// buffers); see docs/capi.md for the contract.
package main

/*
#include <stdint.h>
#include <stdlib.h>
*/
import "C"

func main() {}
