// horizontal.cu - the kernel entry: routes each block to its part. A plain
// launch has one part; a horizontal one gives each part a range of block
// indices (starts baked in below), found by an if-chain or, past a few
// parts, a binary search over the table. Every part runs with at most
// {{THREADS}} threads; the threads a part does not use return at once.
// Holes: entry, THREADS, params, route.
extern "C" __global__ void __launch_bounds__({{THREADS}}) {{entry}}({{params}}) {
{{route}}}
