import type { CacheStatus, Explain } from '../../src/protocol';

export const EXPLAIN: Explain = {
  workspace: '/abs/root',
  turn: 3,
  model: 'smollm2-135m',
  segments: [
    { kind: 'system', tokens: 120, cached: 120, new: 0, invalidated_by: null },
    { kind: 'repo_map', tokens: 700, cached: 700, new: 0, invalidated_by: null },
    { kind: 'diff', tokens: 12, cached: 0, new: 12, invalidated_by: 'src/a.py' },
    { kind: 'user', tokens: 68, cached: 12, new: 56, invalidated_by: null },
  ],
  totals: { tokens: 900, cached: 832, new: 68, hit_pct: 92.4 },
  predicted_cached_tokens: 832,
  measured_recomputed_tokens: 68,
  ttft_ms: 410.2,
  context_size: 8192,
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
