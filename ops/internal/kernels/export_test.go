package kernels

// For the external tests (rates_test.go).
const BenchN = benchN

var BenchData = benchData
