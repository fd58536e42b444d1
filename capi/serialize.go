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
		b, err := arraysToJSON(handleSlice(arrays, n))
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
		infos, err := arraysFromJSON([]byte(C.GoString(graph)))
		if err != nil {
			return err
		}
		return setJSON(map[string]any{"arrays": infos}, result)
	}()
	return setError(err, errOut)
}

// arraysToJSON is cg_arrays_to_json in Go terms: the JSON array graph
// (plan.Marshal) of the arrays behind handles.
func arraysToJSON(handles []uint64) ([]byte, error) {
	as, err := lookupArrays(handles)
	if err != nil {
		return nil, err
	}
	return plan.Marshal(as)
}

// arraysFromJSON is cg_arrays_from_json in Go terms: the arrays of a JSON
// array graph, with new handles.
func arraysFromJSON(graph []byte) ([]arrayInfo, error) {
	as, err := plan.Unmarshal(graph)
	if err != nil {
		return nil, err
	}
	infos := make([]arrayInfo, len(as))
	for i, a := range as {
		infos[i] = newArrayInfo(a, infoOptions{})
	}
	return infos, nil
}
