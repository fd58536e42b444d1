package main

/*
#include <stdint.h>
*/
import "C"

import (
	"encoding/json"
	"runtime"
	"runtime/debug"

	"github.com/cubego/cubego/engine"
	"github.com/cubego/cubego/ops"
)

// Version is the library version, stamped by the build.
var Version = "0.1.0"

//export cg_version
func cg_version(out **C.char) (status C.int32_t) {
	defer guard(&status, nil)
	b, _ := json.Marshal(map[string]string{"version": Version, "go": runtime.Version()})
	*out = C.CString(string(b))
	return statusOK
}

//export cg_set_max_procs
func cg_set_max_procs(n C.int32_t, previous *C.int32_t) (status C.int32_t) {
	defer guard(&status, nil)
	if n <= 0 {
		*previous = C.int32_t(runtime.GOMAXPROCS(0))
		runtime.SetDefaultGOMAXPROCS()
		return statusOK
	}
	*previous = C.int32_t(runtime.GOMAXPROCS(int(n)))
	return statusOK
}

//export cg_set_memory_limit
func cg_set_memory_limit(bytes C.int64_t, previous *C.int64_t) (status C.int32_t) {
	defer guard(&status, nil)
	*previous = C.int64_t(debug.SetMemoryLimit(int64(bytes)))
	return statusOK
}

//export cg_set_gc_percent
func cg_set_gc_percent(percent C.int32_t, previous *C.int32_t) (status C.int32_t) {
	defer guard(&status, nil)
	*previous = C.int32_t(debug.SetGCPercent(int(percent)))
	return statusOK
}

//export cg_free_os_memory
func cg_free_os_memory() (status C.int32_t) {
	defer guard(&status, nil)
	engine.ProcessAllocator().ReleasePooled()
	debug.FreeOSMemory()
	return statusOK
}

//export cg_shutdown
func cg_shutdown() (status C.int32_t) {
	defer guard(&status, nil)
	if err := engine.Cleanup(); err != nil {
		return C.int32_t(statusOf(err))
	}
	return statusOK
}

//export cg_debug_panic
func cg_debug_panic(errOut **C.char) (status C.int32_t) {
	defer guard(&status, errOut)
	var m map[string]int
	m["boom"] = 1 // a nil-map write: a real runtime panic, recovered by guard
	return statusOK
}

// cg_blas opens the shared OpenBLAS at path (when path is not NULL or
// empty) for matrix products and linear algebra, then reports the BLAS in
// use as JSON {"name", "path", "error"}. A library that cannot be used
// leaves the BLAS unchanged: the call still succeeds and "error" says why,
// so a caller can fall back without a second round trip.
//
//export cg_blas
func cg_blas(path *C.char, infoOut **C.char, errOut **C.char) (status C.int32_t) {
	defer guard(&status, errOut)
	if path != nil {
		if p := C.GoString(path); p != "" {
			_ = ops.UseBLASLibrary(p) // kept in CurrentBLAS().Error
		}
	}
	info := ops.CurrentBLAS()
	b, _ := json.Marshal(map[string]string{"name": info.Name, "path": info.Path, "error": info.Error})
	*infoOut = C.CString(string(b))
	return statusOK
}
