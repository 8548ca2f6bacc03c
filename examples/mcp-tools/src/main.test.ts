/** @module Example: the MCP walkthrough runs against its SDK-built MCP server and reports what happened. */
import { expect, it } from 'vitest';
import { main } from './main.js';

it('looks the order up at once, refunds it after the approval, and never shows the token', async () => {
  const lines: string[] = [];
  const refunds = await main((line) => lines.push(line));
  expect(refunds).toEqual(['A-17']);
  expect(lines[0]).toMatch(/^agent Shop assistant: MCP server .*"headerNames":\["Authorization"\]/);
  expect(lines[1]).toBe('waiting for approval: shop/refund_order {"orderId":"A-17"} (mcp)');
  expect(lines.slice(2)).toEqual([
    'user: My order A-17 broke.',
    expect.stringMatching(
      /^assistant: \[\{"id":"call_\w+","name":"lookup_order","arguments":\{"orderId":"A-17"\},"server":"shop"\}\]$/,
    ),
    'tool: {"orderId":"A-17","status":"delivered damaged"}',
    expect.stringMatching(/^assistant: \[\{"id":"call_\w+","name":"refund_order",/),
    'tool: Order A-17 refunded.',
    'assistant: Done (shop__lookup_order, shop__refund_order): Order A-17 refunded.',
  ]);
  expect(lines.join('\n')).not.toContain('shop-token');
});
