-- A lead key may require a CAPTCHA (issue 46): the provider, its secret (written, never read back to a page, a log
-- or an audit entry) and, for reCAPTCHA v3, the lowest score taken. A lead whose token failed is kept as spam with
-- spam_reason 'captcha_failed' (a honeypot's: 'honeypot'); one the provider could not check is stored and delivered,
-- captcha_unverified.
alter table api_keys
  add column captcha_provider text check (captcha_provider in ('turnstile', 'hcaptcha', 'recaptcha')),
  add column captcha_secret text,
  add column captcha_min_score real check (captcha_min_score between 0 and 1);
alter table leads add column spam_reason text, add column captcha_unverified boolean not null default false;
