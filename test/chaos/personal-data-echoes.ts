import type { PersonalValues } from '../support/personal-data';

/**
 * The transformed forms in which providers echo a recipient or the content
 * back (issue 10, finding 3): the fault-injecting adapter puts them in its
 * error texts and codes, and the personal-data scan's self-check proves it
 * finds each of them.
 */
export const PERSONAL_DATA_ECHOES = {
  /** As in a request path: `GET /recipients/amelie%40mail…`. */
  urlEncodedAddress: (v: PersonalValues): string => encodeURIComponent(v.recipientAddress),
  /** As in a dumped request body: quotes and line breaks escaped. */
  jsonEscapedBody: (v: PersonalValues): string => JSON.stringify({ body: v.body }),
  /** As in a provider's excerpt of the request. */
  bodyPrefix: (v: PersonalValues): string => v.body.slice(0, 40),
  upperCasedSubject: (v: PersonalValues): string => v.subject.toUpperCase(),
  /** The first half: for an e-mail address the part before the `@`, so no e-mail shape is left. */
  halfAddress: (v: PersonalValues): string =>
    v.recipientAddress.slice(0, Math.ceil(v.recipientAddress.length / 2)),
  /**
   * The address as an error code: what a code may hold (letters, digits, `_.:-`)
   * kept, the rest dropped. A push token is its own code; a phone number keeps
   * its digits and extension.
   */
  addressAsCode: (v: PersonalValues): string =>
    v.recipientAddress.replace(/[^A-Za-z0-9_.:-]/g, '').slice(0, 64),
} as const;

export type PersonalDataEcho = keyof typeof PERSONAL_DATA_ECHOES;
