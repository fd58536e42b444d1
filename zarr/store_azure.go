//go:build azure

package zarr

import (
	"context"
	"fmt"

	"gocloud.dev/blob/azureblob"
)

// azblob:// stores (Azure Blob Storage), compiled in with the azure build
// tag. Storage options (adlfs names): "account_name" (default: the
// AZURE_STORAGE_ACCOUNT environment variable) and "sas_token"; other
// credentials come from the environment as gocloud.dev's azureblob reads
// them (AZURE_STORAGE_KEY, a connection string, or Azure AD). "timeout"
// and "retries" as for every object store; connections are set up by the
// Azure SDK's transport, so "connect_timeout" is accepted and the
// "timeout" bounds a connection that never comes up.

func init() { storeOpeners["azblob"] = openAzureStore }

func openAzureStore(ctx context.Context, rawURL, container, prefix string, o storageOptions, policy requestPolicy) (Store, error) {
	account, _, err := o.str("account_name")
	if err != nil {
		return nil, err
	}
	sas, _, err := o.str("sas_token")
	if err != nil {
		return nil, err
	}
	if err := o.unknown("azblob"); err != nil {
		return nil, err
	}
	svc, err := azureblob.NewServiceURL(&azureblob.ServiceURLOptions{AccountName: account, SASToken: sas})
	if err != nil {
		return nil, fmt.Errorf("%w: azblob service URL: %v", ErrInvalid, err)
	}
	client, err := azureblob.NewDefaultClient(svc, azureblob.ContainerName(container))
	if err != nil {
		return nil, fmt.Errorf("zarr: azblob client: %w", err)
	}
	b, err := azureblob.OpenBucket(ctx, client, nil)
	if err != nil {
		return nil, fmt.Errorf("zarr: open store %s: %w", rawURL, err)
	}
	return newBucketStore(rawURL, b, prefix, policy), nil
}
