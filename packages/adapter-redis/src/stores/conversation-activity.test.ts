/** @module Tests of merging a conversation's record with its activity. */
import { describe, expect, it } from 'vitest';
import { mergeActivity } from './conversation-activity.js';

const base = { id: 'conv_1', agentId: 'agt_1', userId: null, metadata: {}, status: 'active', createdAt: '2026-01-01T00:00:00.000Z' };

describe('mergeActivity', () => {
  it('takes lastMessageAt from the activity and updatedAt as the later of the two', () => {
    const json = JSON.stringify({ ...base, updatedAt: '2026-01-02T00:00:00.000Z', lastMessageAt: null });
    expect(mergeActivity({ json, activity: '' })).toMatchObject({ updatedAt: '2026-01-02T00:00:00.000Z', lastMessageAt: null });
    expect(mergeActivity({ json, activity: '2026-01-03T00:00:00.000Z' })).toMatchObject({ updatedAt: '2026-01-03T00:00:00.000Z', lastMessageAt: '2026-01-03T00:00:00.000Z' });
    expect(mergeActivity({ json, activity: '2026-01-01T12:00:00.000Z' })).toMatchObject({ updatedAt: '2026-01-02T00:00:00.000Z', lastMessageAt: '2026-01-01T12:00:00.000Z' });
  });

  it('reads a record stored before these fields existed as never updated', () => {
    const json = JSON.stringify(base);
    expect(mergeActivity({ json, activity: '' })).toEqual({ ...base, updatedAt: base.createdAt, lastMessageAt: null });
    expect(mergeActivity({ json, activity: '2026-01-05T00:00:00.000Z' })).toMatchObject({ updatedAt: '2026-01-05T00:00:00.000Z' });
  });
});
