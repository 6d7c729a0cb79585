// keyward's live-server conformance suite test/conformance/sdk.test.ts (the official SDK),
// run unchanged against a node of a 3-node cluster (test/helpers/live.ts).
process.env.KEYWARD_TEST_CLUSTER = '3';
await import('../conformance/sdk.test.js');
