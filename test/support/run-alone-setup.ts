import { holdShared, releaseShared } from './run-alone';

// Every test file holds the shared side of the lock while it runs (see run-alone.ts).
beforeAll(holdShared, 15 * 60_000 + 10_000);
afterAll(releaseShared);
