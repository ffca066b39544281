import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import QRCode from "qrcode";
import { type AdminCtx, type Form, field, pageCtx, sendPage } from "./context.ts";
import { cookieOptions, SESSION_COOKIE } from "./sessions.ts";
import {
  checkPassword,
  enrolTotp,
  MIN_PASSWORD_LENGTH,
  matchTotp,
  newRecoveryCodes,
  newTotpSecret,
  recordFailure,
  setPassword,
  tooManyFailures,
  totpFor,
  useRecoveryCode,
  useTotp,
} from "./users.ts";
import { EnrolPage, LoginPage, PasswordPage, RecoveryCodesPage, VerifyPage } from "./views/auth.ts";
import { ErrorBody, Layout } from "./views/layout.ts";

// Sign-in: password, then (first time) a forced password change and TOTP enrolment, else the
// second factor (TOTP code or a single-use recovery code). Each successful step that raises the
// session's privilege issues a new session id. Failed passwords and codes are logged and, past
// the limits of users.ts, sign-in is refused with 429 for a while.

type Req = FastifyRequest<{ Body: Form }>;

export function authRoutes(app: FastifyInstance, c: AdminCtx): void {
  const setCookie = (reply: FastifyReply, id: string) => reply.setCookie(SESSION_COOKIE, id, cookieOptions);
  const limited = (req: Req, reply: FastifyReply) =>
    sendPage(reply, html429(pageCtx(c, req, reply)), 429).header("retry-after", "900");
  const { t } = c.loc;
  const html429 = (ctx: ReturnType<typeof pageCtx>) =>
    Layout({
      title: t.errorHeading[429],
      ctx,
      narrow: true,
      children: ErrorBody({ t, status: 429, message: t.tooManyAttempts(15) }),
    });

  app.get("/admin/login", async (req, reply) => {
    if (req.adminSession?.stage === "full") return reply.redirect("/admin/", 303);
    return sendPage(reply, LoginPage({ ctx: pageCtx(c, req, reply) }));
  });

  app.post("/admin/login", async (req: Req, reply) => {
    const username = field(req.body, "username");
    const password = field(req.body, "password");
    if (await tooManyFailures(c.db, req.ip, username)) return limited(req, reply);
    const user = await checkPassword(c.db, username, password);
    if (!user) {
      await recordFailure(c.db, req.ip, username);
      const ctx = pageCtx(c, req, reply);
      return sendPage(reply, LoginPage({ ctx, error: t.wrongPassword }), 401);
    }
    if (req.adminSession) await c.sessions.destroy(req.adminSession.id);
    await c.sessions.sweep();
    const enrolled = user.totpSecret !== null && !user.mustChangePassword;
    setCookie(reply, await c.sessions.create(user.id, enrolled ? "mfa" : "setup"));
    return reply.redirect(enrolled ? "/admin/login/verify" : "/admin/setup", 303);
  });

  app.get("/admin/login/verify", async (req, reply) => {
    if (req.adminSession?.stage !== "mfa") return reply.redirect("/admin/login", 303);
    return sendPage(reply, VerifyPage({ ctx: pageCtx(c, req, reply) }));
  });

  app.post("/admin/login/verify", async (req: Req, reply) => {
    const s = req.adminSession;
    if (s?.stage !== "mfa") return reply.redirect("/admin/login", 303);
    if (await tooManyFailures(c.db, req.ip, s.username)) return limited(req, reply);
    const code = field(req.body, "code");
    const ok = /^[\d\s]{6,8}$/.test(code)
      ? await useTotp(c.db, s.userId, code)
      : await useRecoveryCode(c.db, s.userId, code);
    if (!ok) {
      await recordFailure(c.db, req.ip, s.username);
      const ctx = pageCtx(c, req, reply);
      return sendPage(reply, VerifyPage({ ctx, error: t.badCode }), 401);
    }
    setCookie(reply, await c.sessions.rotate(s, "full"));
    return reply.redirect("/admin/", 303);
  });

  app.get("/admin/setup", async (req, reply) => {
    const s = req.adminSession;
    if (s?.stage !== "setup") return reply.redirect(s ? "/admin/" : "/admin/login", 303);
    const ctx = pageCtx(c, req, reply);
    if (s.mustChangePassword) return sendPage(reply, PasswordPage({ ctx }));
    let secret = s.pendingTotpSecret;
    if (!secret) {
      secret = newTotpSecret();
      await c.sessions.setPendingTotp(s.id, secret);
    }
    return sendPage(reply, await enrolPage(c, ctx, s.username, secret));
  });

  app.post("/admin/setup/password", async (req: Req, reply) => {
    const s = req.adminSession;
    if (s?.stage !== "setup" || !s.mustChangePassword) return reply.redirect("/admin/setup", 303);
    const password = field(req.body, "password");
    const confirm = field(req.body, "confirm");
    let error: string | undefined;
    if (password.length < MIN_PASSWORD_LENGTH) error = t.passwordTooShort(MIN_PASSWORD_LENGTH);
    else if (password !== confirm) error = t.passwordsDiffer;
    else if (await checkPassword(c.db, s.username, password)) error = t.passwordUnchanged;
    if (error) return sendPage(reply, PasswordPage({ ctx: pageCtx(c, req, reply), error }), 422);
    await setPassword(c.db, s.userId, password);
    await c.sessions.destroyOthers(s.userId, s.id);
    return reply.redirect("/admin/setup", 303);
  });

  app.post("/admin/setup/totp", async (req: Req, reply) => {
    const s = req.adminSession;
    if (s?.stage !== "setup" || s.mustChangePassword || !s.pendingTotpSecret)
      return reply.redirect("/admin/setup", 303);
    const step = matchTotp(s.pendingTotpSecret, field(req.body, "code"));
    if (step === undefined) {
      const ctx = pageCtx(c, req, reply);
      const page = await enrolPage(c, ctx, s.username, s.pendingTotpSecret, t.codeMismatch);
      return sendPage(reply, page, 422);
    }
    const codes = newRecoveryCodes();
    await enrolTotp(c.db, s.userId, s.pendingTotpSecret, step, codes);
    setCookie(reply, await c.sessions.rotate(s, "full"));
    // Render with the new session (the header shows the user) — the codes exist only in this answer.
    req.adminSession = { ...s, stage: "full", pendingTotpSecret: null, totpEnrolled: true };
    return sendPage(reply, RecoveryCodesPage({ ctx: pageCtx(c, req, reply), codes }));
  });

  app.post("/admin/logout", async (req, reply) => {
    if (req.adminSession) await c.sessions.destroy(req.adminSession.id);
    reply.clearCookie(SESSION_COOKIE, { path: "/" });
    return reply.redirect("/admin/login", 303);
  });
}

async function enrolPage(
  c: AdminCtx,
  ctx: ReturnType<typeof pageCtx>,
  username: string,
  secret: string,
  error?: string,
) {
  const uri = totpFor(secret, username, c.loc.t.admin(c.storeName)).toString();
  const svg = await QRCode.toString(uri, { type: "svg", errorCorrectionLevel: "M", margin: 1 });
  const qr = `data:image/svg+xml;base64,${Buffer.from(svg).toString("base64")}`;
  return EnrolPage({ ctx, qr, secret, uri, error });
}
