// Index reading for the index-driven shaders (gather_nd.comp, scatter.comp): binding `idx` holds
// int32 (IDX_WORDS 1) or int64 (IDX_WORDS 2, little-endian words) indices. The including shader
// declares IDX_WORDS and the buffer idx[] of ints.

/// Index k into an axis of `len`: negative ones count from the end; -1 when out of range (an
/// int64 beyond int32 is out of range anyway).
int index_at(uint k, int len) {
  int i;
  if (IDX_WORDS == 1u) {
    i = idx[k];
  } else {
    int lo = idx[2u * k], hi = idx[2u * k + 1u];
    if (!((hi == 0 && lo >= 0) || (hi == -1 && lo < 0))) return -1;
    i = lo;
  }
  if (i < 0) i += len;
  return i >= 0 && i < len ? i : -1;
}
