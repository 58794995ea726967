// A form that is one button: a POST of the session's CSRF token to `action` (the revoke and remove buttons of the
// members page). `label` names what the button acts on, for a screen reader among many buttons of the same text.
import { CSRF_FIELD } from "./csrf.ts";

export function PostButton({ action, csrf, label, text }: { action: string; csrf: string; label: string; text: string }) {
  return (
    <form method="post" action={action}>
      <input type="hidden" name={CSRF_FIELD} value={csrf} />
      <button type="submit" aria-label={label}>
        {text}
      </button>
    </form>
  );
}
