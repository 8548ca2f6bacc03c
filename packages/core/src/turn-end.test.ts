/** @module atTurnEnd: one queue per turn, in order, after the turn's I/O and before the next turn's. */
import { describe, expect, it } from 'vitest';
import { atTurnEnd } from './turn-end.js';

describe('atTurnEnd', () => {
  it('runs what one turn queued in order, after the turn, and what those queue in the next turn', async () => {
    const ran: string[] = [];
    await new Promise<void>((resolve) => {
      atTurnEnd(() => {
        ran.push('first');
        atTurnEnd(() => {
          ran.push('next turn');
          resolve();
        });
      });
      atTurnEnd(() => ran.push('second'));
      ran.push('this turn');
    });
    expect(ran).toEqual(['this turn', 'first', 'second', 'next turn']);
  });

  it('runs the rest of the queue when one callback throws, and leaves the error uncaught', async () => {
    const failure = new Error('a bug');
    const uncaught = new Promise<unknown>((resolve) => process.once('uncaughtException', resolve));
    const ran = new Promise<string>((resolve) => {
      atTurnEnd(() => {
        throw failure;
      });
      atTurnEnd(() => resolve('ran'));
    });
    expect(await ran).toBe('ran');
    expect(await uncaught).toBe(failure);
  });
});
