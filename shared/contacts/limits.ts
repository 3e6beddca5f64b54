/**
 * The contact constants that code without the request schemas needs (services,
 * repositories, consumers, other domains). Kept apart from model.ts: importing
 * a limit must not build the API schemas at a cold start (model.ts re-exports
 * them).
 */

/** Contact emails are part of a key (the email guard); an email over this length cannot be a contact's. */
export const CONTACT_EMAIL_MAX = 128;
/** Domains of free-mail providers: a contact there is a person, not a company's employee. */
export const FREE_MAIL_DOMAINS = new Set([
  'gmail.com',
  'googlemail.com',
  'yahoo.com',
  'yahoo.co.uk',
  'ymail.com',
  'hotmail.com',
  'hotmail.co.uk',
  'outlook.com',
  'live.com',
  'msn.com',
  'icloud.com',
  'me.com',
  'mac.com',
  'aol.com',
  'proton.me',
  'protonmail.com',
  'gmx.com',
  'gmx.de',
  'gmx.net',
  'web.de',
  'mail.com',
  'yandex.com',
  'yandex.ru',
  'zoho.com',
  'fastmail.com',
  'hey.com',
  'tutanota.com',
  'qq.com',
  '163.com',
  'mail.ru',
]);
export const emailDomain = (email: string) => email.slice(email.lastIndexOf('@') + 1).toLowerCase();
