//go:build !cgo

package kernels

import (
	"errors"
)

// useBLASLibrary needs cgo (dlopen); without it the built-in kernels stay.
func useBLASLibrary(string) error {
	return errors.New("kernels: this build has no cgo, so it cannot open a BLAS library at run time")
}
