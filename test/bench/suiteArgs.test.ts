// `npm run bench` / `keyward bench` take `--full` and `--out DIR`; anything else stops the
// suite before it runs (bench/suite.ts), rather than a long run with the option ignored.
import { describe, expect, it } from 'vitest';
import { unknownSuiteArgument } from '../../bench/lib/report.js';

describe('bench suite arguments', () => {
  it.each([[[]], [['--full']], [['--out', '/tmp/r']], [['--full', '--out', 'r']], [['--out', 'r', '--full']]])('%j is accepted', (argv) => {
    expect(unknownSuiteArgument(argv)).toBeUndefined();
  });

  it.each([
    [['extra'], 'extra'],
    [['--full', 'extra'], 'extra'],
    [['--out'], '--out'],
    [['--out', '--full'], '--out'],
    [['--fast'], '--fast'],
    [['--out', 'r', 'more'], 'more'],
  ])('%j → the first unknown is %s', (argv, first) => {
    expect(unknownSuiteArgument(argv)).toBe(first);
  });
});
