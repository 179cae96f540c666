// horizontal.cu - the kernel entry: routes each block to its part. A plain
// launch has one part; a horizontal one gives each part a range of block
// indices (starts baked in below), found by an if-chain or, past a few
// parts, a binary search over the table. Identical parts may share one
// generic body; then the pointers come packed in one struct parameter (up
// to 32764 bytes on sm_70+) that the body indexes by part, and each group
// finds its part by a binary search over baked block starts.
// Every part runs with at most {{THREADS}} threads; the threads a part
// does not use return at once.
// Every block starts with kf_grid_dep_sync (the dep hole; nothing with
// KFUSE_PDL=0): nothing is read or written before the kernel ahead in the
// stream is done (common.cuh).
// Holes: entry, cluster (__cluster_dims__ of a row split over a cluster, or
// nothing), THREADS, decls, params, dep, route.
{{decls}}extern "C" __global__ void {{cluster}}__launch_bounds__({{THREADS}}) {{entry}}({{params}}) {
{{dep}}{{route}}}
