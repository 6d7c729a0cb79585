// The capacity report's targets table: a figure next to "met" / "not met" must not read as
// the goal when the value misses it (2.9986× was shown as 3.00×, not met).
import { describe, expect, it } from 'vitest';
import { targetFigure } from '../../bench/lib/report.js';

describe('targetFigure', () => {
  // Two decimals away from the goal; three where two would read as the goal itself.
  it.each([
    [3.4321, 3, false, '3.43'],
    [0.614, 2, true, '0.61'],
    [2.93, 3, false, '2.93'],
    [3, 3, false, '3.00'],
    [2.9986, 3, false, '2.998'],
    [2.99999, 3, false, '2.999'],
    [3.004, 3, false, '3.004'],
    [1.003, 1, false, '1.003'],
    [2.0004, 2, true, '2.001'],
    [1.996, 2, true, '1.996'],
  ])('%d against %d (at most: %s) is %s', (value, goal, atMost, shown) => {
    expect(targetFigure(value, goal, atMost)).toBe(shown);
  });

  it('a value not measured is a dash', () => {
    expect(targetFigure(Number.NaN, 3, false)).toBe('–');
  });
});
