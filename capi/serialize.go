package main

/*
#include <stdint.h>
*/
import "C"

import "github.com/cubego/cubego/plan"

//export cg_arrays_to_json
func cg_arrays_to_json(arrays *C.uint64_t, n C.int64_t, out **C.char, errOut **C.char) (status C.int32_t) {
	defer guard(&status, errOut)
	err := func() error {
		as, err := arraysOf(arrays, n)
		if err != nil {
			return err
		}
		b, err := plan.Marshal(as)
		if err != nil {
			return err
		}
		*out = C.CString(string(b))
		return nil
	}()
	return setError(err, errOut)
}

//export cg_arrays_from_json
func cg_arrays_from_json(graph *C.char, result **C.char, errOut **C.char) (status C.int32_t) {
	defer guard(&status, errOut)
	err := func() error {
		as, err := plan.Unmarshal([]byte(C.GoString(graph)))
		if err != nil {
			return err
		}
		infos := make([]arrayInfo, len(as))
		for i, a := range as {
			infos[i] = newArrayInfo(a)
		}
		return setJSON(map[string]any{"arrays": infos}, result)
	}()
	return setError(err, errOut)
}
