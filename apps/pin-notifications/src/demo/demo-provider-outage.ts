/**
 * The demo provider's outage, for rehearsing the provider-outage runbook on
 * the demo app (`test/runbooks.rehearsal.spec.ts`): while it lasts, every call
 * of the demo provider answers 503. One switch for the whole process, as a
 * real provider's outage is one for every instance that calls it: the app's
 * worker and an ops CLI in the same process see the same provider.
 */
export class DemoProviderOutage {
  private active = false;

  get isActive(): boolean {
    return this.active;
  }

  begin(): void {
    this.active = true;
  }

  end(): void {
    this.active = false;
  }
}

export const demoProviderOutage = new DemoProviderOutage();

/** What the demo provider answers during an outage: the code the runbooks and the demo's seeded rows use. */
export const DEMO_OUTAGE_ERROR_CODE = 'provider_unavailable';
