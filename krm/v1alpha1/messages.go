package v1alpha1

// Messages of the rules that are not plain OpenAPI checks. Each is written in
// the words of the contract's troubleshooting table so a user can search for
// it, and each is the message of the matching CEL rule in the generated CRDs,
// so the function and the API server say the same thing.
const (
	MsgS3Union                   = "spec.s3 must be set exactly when spec.type is S3"
	MsgGlanceRefImmutable        = "spec.glanceRef is immutable; delete and recreate the GlanceBackend instead"
	MsgTypeImmutable             = "spec.type is immutable"
	MsgReservedStoreName         = "reserved or operator-managed Glance store section: the name becomes the [<name>] config section and must not be default, database, keystone_authtoken, glance_store, paste_deploy, oslo_policy, os_glance_staging_store or os_glance_tasks_store"
	MsgReservedStorePrefix       = "name uses the reserved os_glance_ / os-glance- prefix (Glance owns it for its staging and tasks stores)"
	MsgOptionKeyPattern          = "option name must match ^[A-Za-z0-9_]+$ (letters, digits, underscore)"
	MsgOptionKeyTooLong          = "option name must be at most 256 characters"
	MsgINIInjection              = "must not contain a newline or carriage return (INI injection guard)"
	MsgSectionPattern            = "section name must match ^[A-Za-z0-9_.-]+$"
	MsgConfigKeyPattern          = "option name must match ^[A-Za-z0-9_.-]+$"
	MsgImageTagXorDigest         = "exactly one of spec.image.tag and spec.image.digest must be set"
	MsgVirtualBucketLabel        = "with bucketURLFormat virtual the bucket becomes a host name label (<bucket>.<host>): it must be a DNS label (lower-case letters, digits and '-', at most 63, no dots)"
	MsgCACertTwice               = "s3_store_cacert is set by spec.s3.caBundleRef: set the CA bundle in one place"
	MsgChunkBelowS3Minimum       = "must be at least 5 (MiB): S3 refuses smaller multipart parts, and glance_store disables a store whose s3_store_large_object_chunk_size is below 5 (BadStoreConfiguration)"
	MsgGlanceNameTooLong         = `name must be at most 43 characters: the db-purge CronJob appends "-db-purge" and Kubernetes caps CronJob names at 52 characters`
	MsgExactlyOneDefault         = "exactly one default store is allowed"
	MsgTargetClusterRefImmutable = "targetClusterRef is immutable"
	MsgHostUserinfo              = "must not carry userinfo (user:password@): the S3 credentials come from spec.s3.credentialsSecretRef, and glance_store writes the host into every image's location URL"
	MsgHostQueryOrFragment       = "must not contain a query (?) or a fragment (#): glance_store builds each image's location URL from the host, and a ? or # there breaks parsing it"
	MsgHostWhitespace            = "must not contain a space or a tab"
	MsgVPABesideHPA              = "spec.deployment.verticalAutoscaling cannot be set while spec.autoscaling scales the same Deployment"
)

// Reasons, shared by the function's results and the controller's conditions.
const (
	ReasonNoDefaultBackend = "NoDefaultBackend"
	// ReasonUpgradePathInvalid: spec.openStackRelease cannot be reached
	// from the release the database was migrated to (a downgrade, or a
	// skip other than SLURP to SLURP); the seed operator's word.
	ReasonUpgradePathInvalid = "UpgradePathInvalid"
	// ReasonDowngradeNotSupported: spec.openStackRelease is older than
	// the release the database was migrated to.
	ReasonDowngradeNotSupported = "DowngradeNotSupported"
	// ReasonImageReleaseMismatch: spec.image's tag names another release
	// than spec.openStackRelease (the seed's reason).
	ReasonImageReleaseMismatch = "ImageReleaseMismatch"
	// ReasonDatabaseSynced: the schema is at spec.openStackRelease;
	// ReasonDBSyncInProgress: at an older release, the path to the
	// spec's valid, its glance-manage Job not completed yet (the seed
	// operator's DatabaseReady words).
	ReasonDatabaseSynced   = "DatabaseSynced"
	ReasonDBSyncInProgress = "DBSyncInProgress"
	// ReasonEgressNotRendered: glance-api contacts an endpoint no rendered
	// file names, which the generated NetworkPolicy cannot admit by itself.
	ReasonEgressNotRendered = "EgressNotRendered"
	ReasonWaitingForParent  = "WaitingForParent"
)
