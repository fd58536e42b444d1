// The call bound to the calling thread (see call.go): C thread-local
// storage, because a Go export runs on the thread of the C caller and Go
// has no thread-local storage of its own.
#include <stdint.h>

static _Thread_local uint64_t bound_call;

__attribute__((visibility("hidden"))) void cgo_call_set_bound(uint64_t call) { bound_call = call; }

__attribute__((visibility("hidden"))) uint64_t cgo_call_bound(void) { return bound_call; }
