// Import direction in src/ (npm test runs `npm run test:deps`, which fails on a violation):
//
//   main.ts serve.ts cli.ts bootstrap.ts   composition: may import anything
//   http → rpc → procedures → edits → lookups → views, fields → request → workers → analytics → auth
//        → cluster → store → domain → engine
//   errors/, schemas/, config.ts, log.ts    the base: below everything, import only each other
//
// A module may import its own layer and the layers below it, never one above. Procedures of
// one namespace do not import another namespace's, and nothing imports in a circle.
const LAYERS = [
  ['composition', '^src/(main|serve|cli|bootstrap)\\.ts$'],
  ['http', '^src/http/'],
  ['rpc', '^src/rpc/'],
  ['procedures', '^src/procedures/'],
  ['edits', '^src/edits/'],
  ['lookups', '^src/lookups/'],
  ['views and fields', '^src/(views|fields)/'],
  ['request', '^src/request/'],
  ['workers', '^src/workers/'],
  ['analytics', '^src/analytics/'],
  ['auth', '^src/auth/'],
  ['cluster', '^src/cluster/'],
  ['store', '^src/store/'],
  ['domain', '^src/domain/'],
  ['engine', '^src/engine/'],
  ['base', '^src/((errors|schemas)/|(config|log)\\.ts$)'],
];

const ROOMS = LAYERS.map(([, p]) => `(${p})`).join('|');

const upward = LAYERS.slice(1).map(([name, path], i) => ({
  name: `layers: ${name} imports upward`,
  comment: `${name} may import only the layers below it (${LAYERS.slice(i + 2).map(([n]) => n).join(', ')}) — see scripts/dependency-rules.cjs`,
  severity: 'error',
  from: { path },
  to: { path: LAYERS.slice(0, i + 1).map(([, p]) => `(${p})`).join('|') },
}));

module.exports = {
  forbidden: [
    ...upward,
    {
      name: 'layers: unknown room',
      comment: 'every file under src/ that imports or is imported belongs to a layer of scripts/dependency-rules.cjs; add a new room there',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/', pathNot: ROOMS },
    },
    {
      name: 'layers: unknown room imports',
      comment: 'every file under src/ that imports or is imported belongs to a layer of scripts/dependency-rules.cjs; add a new room there',
      severity: 'error',
      from: { path: '^src/', pathNot: ROOMS },
      to: { path: '^src/' },
    },
    {
      name: 'procedures: one namespace imports another',
      comment: 'what two namespaces share lives in views/, lookups/, fields/ or edits/',
      severity: 'error',
      from: { path: '^src/procedures/([^/]+)/' },
      to: { path: '^src/procedures/', pathNot: '^src/procedures/$1/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
