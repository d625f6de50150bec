/**
 * The part of oidc-provider 9's API the cloud uses. The package ships no type declarations, and
 * `@types/oidc-provider` lags the major versions, so we declare only what we call and keep the
 * configuration loosely typed (it is validated by oidc-provider itself at construction).
 */
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  /** The Koa context oidc-provider hands to configuration callbacks (only what we touch). */
  export interface ProviderContext {
    body: unknown;
    type: string;
    status: number;
    set(field: string, value: string): void;
    oidc: { client?: { clientId: string; clientName?: string } };
  }

  export interface InteractionDetails {
    uid: string;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    params: Record<string, unknown> & { client_id?: string; scope?: string };
    session?: { accountId?: string; uid: string };
    grantId?: string;
  }

  export interface AccessTokenEntity {
    jti: string;
    accountId?: string;
    clientId?: string;
    grantId?: string;
    sessionUid?: string;
    expiresWithSession?: boolean;
  }

  export interface GrantEntity {
    accountId?: string;
    clientId?: string;
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }

  /** A device code as the provider keeps it (RFC 8628), with the fields an approval sets. */
  export interface DeviceCodeEntity {
    clientId: string;
    params?: { scope?: string };
    isExpired: boolean;
    consumed?: unknown;
    error?: string;
    accountId?: string;
    grantId?: string;
    scope?: string;
    authTime?: number;
    inFlight?: boolean;
    save(): Promise<string>;
  }

  export interface AdapterPayload {
    [key: string]: unknown;
    grantId?: string;
    userCode?: string;
    uid?: string;
    consumed?: number;
  }

  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export type AdapterConstructor = new (kind: string) => Adapter;

  export class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    readonly issuer: string;
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
    on(event: string, listener: (...args: any[]) => void): this;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    readonly AccessToken: { find(value: string): Promise<AccessTokenEntity | undefined> };
    readonly Grant: {
      new (properties: { accountId: string; clientId: string }): GrantEntity;
      find(id: string): Promise<GrantEntity | undefined>;
    };
    readonly DeviceCode: { findByUserCode(userCode: string, options?: { ignoreExpiration?: boolean }): Promise<DeviceCodeEntity | undefined> };
    readonly Session: { findByUid(uid: string): Promise<object | undefined> };
  }

  export default Provider;
}
