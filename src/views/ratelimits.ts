// A rate-limit override as ratelimits.getOverride and listOverrides return it.
export interface OverrideView {
  overrideId: string;
  identifier: string;
  limit: number;
  duration: number;
}
