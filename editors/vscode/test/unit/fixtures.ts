import type { CacheStatus, Explain } from '../../src/protocol';

export const EXPLAIN: Explain = {
  workspace: '/abs/root',
  turn: 3,
  model: 'smollm2-135m',
  segments: [
    { kind: 'system', tokens: 120, cached: 120, new: 0, invalidated_by: null },
    { kind: 'repo_map', tokens: 700, cached: 700, new: 0, invalidated_by: null },
    { kind: 'retrieved', tokens: 240, cached: 180, new: 60, invalidated_by: 'new code for this question' },
    { kind: 'diff', tokens: 12, cached: 0, new: 12, invalidated_by: 'src/a.py' },
    { kind: 'user', tokens: 68, cached: 12, new: 56, invalidated_by: null },
  ],
  totals: { tokens: 1140, cached: 1012, new: 128, hit_pct: 88.8 },
  predicted_cached_tokens: 1012,
  measured_recomputed_tokens: 128,
  ttft_ms: 410.2,
  context_size: 8192,
  notes: [
    'thread rebased: turns 1-3 summarised (2 kept in full)',
    'retrieved: 1 chunk(s) already in the thread, referenced (not repeated)',
  ],
  retrieved: [
    { id: 'pkg/signer.py:40-72', name: 'Signer.unsign', tokens: 60, status: 'new',
      reasons: ['defines Signer.unsign (mentioned)', 'BM25 rank 2'] },
    { id: 'pkg/keys.py:3-18', name: 'derive_key', tokens: 180, status: 'in thread', reasons: ['caller of sign'] },
  ],
  citations: {
    files_real: ['pkg/signer.py'],
    files_unknown: ['pkg/crypto.py'],
    symbols_real: ['Signer.unsign'],
    symbols_unknown: ['Signer.verify_fast'],
    lines_unknown: ['pkg/keys.py:400'],
  },
};

export function cacheStatus(overrides: Partial<CacheStatus> = {}): CacheStatus {
  return {
    workspace: '/abs/root',
    cachedTokens: 832,
    newTokens: 68,
    promptTokens: 900,
    hitPct: 92.4,
    ttftMs: 410.2,
    state: 'idle',
    ...overrides,
  };
}
