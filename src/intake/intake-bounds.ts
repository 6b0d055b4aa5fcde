/**
 * Apps (or API keys) of one request that the rate limiter is asked about (one Redis script call
 * covers them all). Events of further apps in the same request are throttled with the shortest
 * `Retry-After`, so one request cannot make the limiter do unbounded work; SDKs send one app per
 * request.
 */
export const MAX_LIMITED_SUBJECTS_PER_REQUEST = 16;
