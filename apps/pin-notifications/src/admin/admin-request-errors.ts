/** No session, a wrong token, or the host's AdminAccess said no: 401 (the page shows its login form). */
export class AdminUnauthorizedError extends Error {
  constructor(message = 'not signed in to the admin page') {
    super(message);
    this.name = 'AdminUnauthorizedError';
  }
}

/** A state-changing request without a matching CSRF token, or from another site: 403, nothing changed. */
export class AdminForbiddenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdminForbiddenError';
  }
}

/** No row has this id: 404. */
export class AdminNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdminNotFoundError';
  }
}
